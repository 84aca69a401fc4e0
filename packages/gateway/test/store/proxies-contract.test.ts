import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshStore, STORE_KINDS } from "../../../../test/support/stores.ts";
import { newId } from "../../src/store/ids.ts";
import type { ProxyRecord } from "../../src/store/proxies.ts";
import type { Store } from "../../src/store/store.ts";

describe.each(STORE_KINDS)("proxy store contract on %s", (kind) => {
  let store: Store;
  let dispose: () => Promise<void>;
  let clock = Date.parse("2030-01-01T00:00:00.000Z");

  beforeAll(async () => {
    ({ store, dispose } = await freshStore(kind));
  });

  afterAll(async () => {
    await dispose?.();
  });

  /** Every test works in an organization of its own, so tests share one database without seeing each other. */
  async function organization(): Promise<string> {
    return (await store.organizations.ensure(`org-${newId(8)}`)).id;
  }

  async function insert(organizationId: string, overrides: Partial<ProxyRecord> = {}): Promise<ProxyRecord> {
    clock += 1000;
    const record: ProxyRecord = {
      id: newId(),
      organizationId,
      name: "office proxy",
      type: "custom",
      protocol: "http",
      status: null,
      ipAddress: null,
      lastChecked: null,
      bypassHosts: ["*.internal.example.com", "localhost"],
      config: { host: "Proxy.Example.com", port: 3128, username: "alice" },
      passwordSealed: "v1.c2VhbGVk.cGFzc3dvcmQ=",
      caBundleSealed: null,
      createdAt: new Date(clock).toISOString(),
      deletedAt: null,
      ...overrides,
    };
    await store.proxies.insert(record);
    return record;
  }

  it("gives back a proxy exactly as it was inserted", async () => {
    const org = await organization();
    const record = await insert(org, {
      status: "available",
      ipAddress: "203.0.113.9",
      lastChecked: "2030-01-01T00:00:05.000Z",
    });
    expect(await store.proxies.findActive(org, record.id)).toEqual(record);
  });

  it("keeps a managed proxy's config and an empty bypass list", async () => {
    const org = await organization();
    const record = await insert(org, {
      type: "residential",
      config: { city: "sanfrancisco", country: "US", os: "macos" },
      bypassHosts: [],
      passwordSealed: null,
    });
    expect(await store.proxies.findActive(org, record.id)).toEqual(record);
  });

  it("does not find another organization's proxy", async () => {
    const record = await insert(await organization());
    expect(await store.proxies.findActive(await organization(), record.id)).toBeUndefined();
  });

  it("allows two proxies with the same name", async () => {
    const org = await organization();
    await insert(org, { name: "twin" });
    await insert(org, { name: "twin" });
    expect((await store.proxies.list(org, { name: "twin", offset: 0, limit: 10 })).items).toHaveLength(2);
  });

  describe("rename", () => {
    it("changes the name and nothing else", async () => {
      const org = await organization();
      const record = await insert(org, {
        status: "unavailable",
        ipAddress: "198.51.100.1",
        lastChecked: "2030-01-01T00:00:00.000Z",
      });
      const renamed = await store.proxies.rename(org, record.id, "renamed");
      expect(renamed).toEqual({ ...record, name: "renamed" });
      expect(await store.proxies.findActive(org, record.id)).toEqual(renamed);
    });

    it("finds nothing to rename in another organization", async () => {
      const record = await insert(await organization());
      expect(await store.proxies.rename(await organization(), record.id, "stolen")).toBeUndefined();
      expect((await store.proxies.findActive(record.organizationId, record.id))?.name).toBe(record.name);
    });

    it("finds nothing to rename once deleted", async () => {
      const org = await organization();
      const record = await insert(org);
      await store.proxies.markDeleted(org, record.id, new Date().toISOString());
      expect(await store.proxies.rename(org, record.id, "ghost")).toBeUndefined();
    });

    it("makes the new name findable by the name filter and the old one not", async () => {
      const org = await organization();
      const record = await insert(org, { name: "before" });
      await store.proxies.rename(org, record.id, "After");
      expect((await store.proxies.list(org, { name: "after", offset: 0, limit: 10 })).items.map((p) => p.id)).toEqual([
        record.id,
      ]);
      expect((await store.proxies.list(org, { name: "before", offset: 0, limit: 10 })).items).toEqual([]);
    });
  });

  describe("recordCheck", () => {
    it("sets status, IP address and time of the check", async () => {
      const org = await organization();
      const record = await insert(org);
      const checked = await store.proxies.recordCheck(org, record.id, {
        status: "available",
        ipAddress: "203.0.113.7",
        checkedAt: "2030-02-01T00:00:00.000Z",
      });
      expect(checked).toEqual({
        ...record,
        status: "available",
        ipAddress: "203.0.113.7",
        lastChecked: "2030-02-01T00:00:00.000Z",
      });
    });

    it("leaves status and IP address alone when the check did not determine them", async () => {
      const org = await organization();
      const record = await insert(org, { status: "available", ipAddress: "203.0.113.7" });
      const checked = await store.proxies.recordCheck(org, record.id, { checkedAt: "2030-02-02T00:00:00.000Z" });
      expect(checked).toEqual({ ...record, lastChecked: "2030-02-02T00:00:00.000Z" });
    });

    it("finds nothing to update in another organization", async () => {
      const record = await insert(await organization());
      expect(
        await store.proxies.recordCheck(await organization(), record.id, {
          status: "available",
          checkedAt: "2030-01-01T00:00:00.000Z",
        }),
      ).toBeUndefined();
    });
  });

  describe("markDeleted", () => {
    it("hides the proxy from every read", async () => {
      const org = await organization();
      const record = await insert(org, { name: "doomed" });
      expect(await store.proxies.markDeleted(org, record.id, new Date().toISOString())).toBe(true);
      expect(await store.proxies.findActive(org, record.id)).toBeUndefined();
      expect((await store.proxies.list(org, { offset: 0, limit: 10 })).items).toEqual([]);
      expect((await store.proxies.list(org, { query: record.id, offset: 0, limit: 10 })).items).toEqual([]);
    });

    it("keeps the row (a soft delete)", async () => {
      const org = await organization();
      const record = await insert(org);
      await store.proxies.markDeleted(org, record.id, "2030-03-01T00:00:00.000Z");
      const rows = await store.sql.query<{ deleted_at: string }>("SELECT deleted_at FROM proxies WHERE id = $1", [
        record.id,
      ]);
      expect(rows).toEqual([{ deleted_at: "2030-03-01T00:00:00.000Z" }]);
    });

    it("answers false for an unknown, foreign or already deleted proxy", async () => {
      const org = await organization();
      const record = await insert(org);
      expect(await store.proxies.markDeleted(org, "no-such-id", new Date().toISOString())).toBe(false);
      expect(await store.proxies.markDeleted(await organization(), record.id, new Date().toISOString())).toBe(false);
      await store.proxies.markDeleted(org, record.id, new Date().toISOString());
      expect(await store.proxies.markDeleted(org, record.id, new Date().toISOString())).toBe(false);
    });
  });

  describe("list", () => {
    it("pages oldest first and says whether more follow", async () => {
      const org = await organization();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await insert(org, { name: `p${i}` })).id);
      const first = await store.proxies.list(org, { offset: 0, limit: 2 });
      const second = await store.proxies.list(org, { offset: 2, limit: 2 });
      const last = await store.proxies.list(org, { offset: 4, limit: 2 });
      expect(first.items.map((p) => p.id)).toEqual(ids.slice(0, 2));
      expect(first.hasMore).toBe(true);
      expect(second.items.map((p) => p.id)).toEqual(ids.slice(2, 4));
      expect(second.hasMore).toBe(true);
      expect(last.items.map((p) => p.id)).toEqual(ids.slice(4));
      expect(last.hasMore).toBe(false);
    });

    it("says no more follow when the page ends exactly at the last proxy", async () => {
      const org = await organization();
      await insert(org);
      await insert(org);
      expect(await store.proxies.list(org, { offset: 0, limit: 2 })).toMatchObject({ hasMore: false });
    });

    it("lists only the organization's own proxies", async () => {
      const org = await organization();
      const mine = await insert(org);
      await insert(await organization());
      expect((await store.proxies.list(org, { offset: 0, limit: 10 })).items.map((p) => p.id)).toEqual([mine.id]);
    });

    it("filters by exact name, case-insensitively, beyond ASCII too", async () => {
      const org = await organization();
      const match = await insert(org, { name: "Zürich Office" });
      await insert(org, { name: "Zürich Office 2" });
      await insert(org, { name: "Zürich" });
      const found = await store.proxies.list(org, { name: "ZÜRICH office", offset: 0, limit: 10 });
      expect(found.items.map((p) => p.id)).toEqual([match.id]);
    });

    it("finds by a case-insensitive substring of the name", async () => {
      const org = await organization();
      const match = await insert(org, { name: "Berlin Residential" });
      await insert(org, { name: "Paris" });
      expect(
        (await store.proxies.list(org, { query: "lin res", offset: 0, limit: 10 })).items.map((p) => p.id),
      ).toEqual([match.id]);
    });

    it("finds by a case-insensitive substring of a custom proxy's host", async () => {
      const org = await organization();
      const match = await insert(org, { config: { host: "Squid.Corp.Example", port: 3128 } });
      await insert(org, { config: { host: "other.example", port: 3128 } });
      expect(
        (await store.proxies.list(org, { query: "squid.corp", offset: 0, limit: 10 })).items.map((p) => p.id),
      ).toEqual([match.id]);
    });

    it("finds by a substring of the IP address", async () => {
      const org = await organization();
      const match = await insert(org, { ipAddress: "203.0.113.77" });
      await insert(org, { ipAddress: "198.51.100.1" });
      expect((await store.proxies.list(org, { query: "113.7", offset: 0, limit: 10 })).items.map((p) => p.id)).toEqual([
        match.id,
      ]);
    });

    it("finds by id only when the whole id matches", async () => {
      const org = await organization();
      const match = await insert(org, { name: "plain" });
      await insert(org, { name: "other" });
      expect((await store.proxies.list(org, { query: match.id, offset: 0, limit: 10 })).items.map((p) => p.id)).toEqual(
        [match.id],
      );
      expect((await store.proxies.list(org, { query: match.id.slice(0, 10), offset: 0, limit: 10 })).items).toEqual([]);
    });

    it("treats % and _ in the query as themselves, not as wildcards", async () => {
      const org = await organization();
      const match = await insert(org, { name: "100%_real" });
      await insert(org, { name: "100 percent" });
      expect((await store.proxies.list(org, { query: "0%_r", offset: 0, limit: 10 })).items.map((p) => p.id)).toEqual([
        match.id,
      ]);
      expect((await store.proxies.list(org, { query: "%", offset: 0, limit: 10 })).items.map((p) => p.id)).toEqual([
        match.id,
      ]);
    });

    it("combines the name and query filters", async () => {
      const org = await organization();
      const match = await insert(org, { name: "edge", ipAddress: "203.0.113.5" });
      await insert(org, { name: "edge", ipAddress: "198.51.100.5" });
      const found = await store.proxies.list(org, { name: "edge", query: "203.0", offset: 0, limit: 10 });
      expect(found.items.map((p) => p.id)).toEqual([match.id]);
    });
  });

  it("refuses a type the schema does not know", async () => {
    await expect(insert(await organization(), { type: "socks" as ProxyRecord["type"] })).rejects.toThrow();
  });
});
