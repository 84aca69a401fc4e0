import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { freshStore } from "../../../../test/support/stores.ts";
import { authenticate, createApiKey, hashApiKey } from "../../src/auth/api-keys.ts";
import { PrincipalCache } from "../../src/auth/principal-cache.ts";
import type { Store } from "../../src/store/store.ts";

let store: Store;
let dispose: () => Promise<void>;

beforeEach(async () => {
  ({ store, dispose } = await freshStore("sqlite"));
});

afterEach(async () => {
  await dispose();
});

describe("API keys", () => {
  it("are long random secrets with a recognisable prefix", async () => {
    const { key } = await createApiKey(store, "acme", "a");
    expect(key).toMatch(/^sk_[A-Za-z0-9_-]{43}$/);
  });

  it("are stored as their SHA-256 hash only", async () => {
    const { key, record } = await createApiKey(store, "acme", "a");
    expect(record.keyHash).toBe(hashApiKey(key));
    expect(record.keyHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("authenticate resolves a Bearer key to its organization", async () => {
    const { key, record } = await createApiKey(store, "acme", "a");
    expect(await authenticate(store, `Bearer ${key}`)).toEqual({ organizationId: "acme", apiKeyId: record.id });
  });

  it("authenticate accepts the scheme in any case", async () => {
    const { key } = await createApiKey(store, "acme", "a");
    expect((await authenticate(store, `bearer ${key}`)).organizationId).toBe("acme");
  });

  it.each([undefined, "", "Bearer", "Bearer ", "Basic abc", "Bearer a b", "sk_abc"])(
    "authenticate refuses the header %j with unauthorized",
    async (header) => {
      await expect(authenticate(store, header)).rejects.toMatchObject({ code: "unauthorized" });
    },
  );

  it("authenticate with a cache does not read the store again for a key it accepted", async () => {
    const { key } = await createApiKey(store, "acme", "a");
    const cache = new PrincipalCache();
    await authenticate(store, `Bearer ${key}`, cache);
    const lookup = vi.spyOn(store.apiKeys, "findActiveByHash");
    expect((await authenticate(store, `Bearer ${key}`, cache)).organizationId).toBe("acme");
    expect(lookup).not.toHaveBeenCalled();
  });

  it("authenticate with a cache refuses a key as soon as it is revoked", async () => {
    const { key, record } = await createApiKey(store, "acme", "a");
    const cache = new PrincipalCache();
    await authenticate(store, `Bearer ${key}`, cache);
    await store.apiKeys.revoke(record.id, new Date().toISOString());
    await expect(authenticate(store, `Bearer ${key}`, cache)).rejects.toMatchObject({ code: "unauthorized" });
  });
});
