import { describe, expect, it } from "vitest";
import { PrincipalCache } from "../../src/auth/principal-cache.ts";

const acme = { organizationId: "acme", apiKeyId: "k1" };
const globex = { organizationId: "globex", apiKeyId: "k2" };

describe("PrincipalCache", () => {
  it("returns a principal stored under the same revocation version", () => {
    const cache = new PrincipalCache();
    expect(cache.get("h1", 1)).toBeUndefined();
    cache.set("h1", acme, 1);
    expect(cache.get("h1", 1)).toEqual(acme);
  });

  it("forgets everything when the revocation version changes", () => {
    const cache = new PrincipalCache();
    cache.get("h1", 1);
    cache.set("h1", acme, 1);
    expect(cache.get("h1", 2)).toBeUndefined();
    expect(cache.get("h1", 1)).toBeUndefined();
  });

  it("keeps nothing looked up under a version that changed during the lookup", () => {
    const cache = new PrincipalCache();
    cache.get("h1", 1);
    cache.get("h2", 2);
    cache.set("h1", acme, 1);
    expect(cache.get("h1", 2)).toBeUndefined();
  });

  it("serves and keeps nothing while the version is unknown", () => {
    const cache = new PrincipalCache();
    cache.get("h1", undefined);
    cache.set("h1", acme, undefined);
    expect(cache.get("h1", undefined)).toBeUndefined();
  });

  it("drops the oldest entry when full", () => {
    const cache = new PrincipalCache(1);
    cache.get("h1", 1);
    cache.set("h1", acme, 1);
    cache.set("h2", globex, 1);
    expect(cache.get("h1", 1)).toBeUndefined();
    expect(cache.get("h2", 1)).toEqual(globex);
  });
});
