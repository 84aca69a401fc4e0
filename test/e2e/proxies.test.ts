import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import { newId } from "../../packages/gateway/src/store/ids.ts";
import {
  expectError,
  expectInvalidInput,
  expectProxy,
  json,
  type ProxyBody,
} from "../../packages/gateway/test/proxies/http-expect.ts";
import { TEST_TLS } from "../../packages/gateway/test/proxies/loopback-proxy.ts";
import { type System, startSystem } from "../support/system.ts";

let system: System;

beforeAll(async () => {
  system = await startSystem({ store: "sqlite" });
});

afterAll(async () => {
  await system?.stop();
});

const CUSTOM = { type: "custom", protocol: "http", config: { host: "proxy.example.com", port: 3128 } };

type Api = System["api"];

/** Calls the API as a brand-new organization, so a test sees only the proxies it made. */
async function newOrganization(): Promise<{ api: Api; organizationId: string }> {
  const organizationId = `org-${newId(8)}`;
  const { key } = await createApiKey(system.store, organizationId, "test");
  const api: Api = (path, init = {}) =>
    system.api(path, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${key}` },
    });
  return { api, organizationId };
}

function post(body: unknown, api = system.api): Promise<Response> {
  return api("/proxies", json("POST", body));
}

async function create(body: unknown = { type: "datacenter" }, api = system.api): Promise<ProxyBody> {
  return expectProxy(await post(body, api));
}

function rename(id: string, body: unknown, api = system.api): Promise<Response> {
  return api(`/proxies/${encodeURIComponent(id)}`, json("PATCH", body));
}

async function get(id: string, api = system.api): Promise<Response> {
  return api(`/proxies/${encodeURIComponent(id)}`);
}

async function list(query: string, api: Api): Promise<{ res: Response; ids: string[] }> {
  const res = await api(`/proxies${query}`);
  expect(res.status).toBe(200);
  return { res, ids: ((await res.clone().json()) as ProxyBody[]).map((proxy) => proxy.id) };
}

describe("POST /proxies", () => {
  it("creates a datacenter proxy in the US over https with no bypass hosts, named after its id", async () => {
    const proxy = await create({ type: "datacenter" });
    expect(proxy).toEqual({
      type: "datacenter",
      id: expect.stringMatching(/^[a-z0-9]{24}$/),
      name: proxy.id,
      protocol: "https",
      bypass_hosts: [],
      config: { country: "US" },
    });
  });

  it("answers with no status, ip_address or last_checked until a health check sets them", async () => {
    const proxy = await create({ type: "isp" });
    expect(Object.keys(proxy).sort()).toEqual(["bypass_hosts", "config", "id", "name", "protocol", "type"]);
  });

  it("trims the name it is given", async () => {
    expect((await create({ type: "datacenter", name: "  edge  " })).name).toBe("edge");
  });

  it("creates an ISP proxy in the country given", async () => {
    expect((await create({ type: "isp", config: { country: "DE" } })).config).toEqual({ country: "DE" });
  });

  it("creates a residential proxy with every targeting field, including the deprecated os", async () => {
    const config = { asn: "AS7922", city: "sanfrancisco", country: "US", state: "CA", zip: "94105", os: "macos" };
    expect((await create({ type: "residential", config })).config).toEqual(config);
  });

  it("creates a mobile proxy with city, country and US state", async () => {
    const config = { city: "losangeles", country: "US", state: "CA" };
    expect((await create({ type: "mobile", config })).config).toEqual(config);
  });

  it("creates a custom proxy and shows its secrets only as has_password and has_ca_bundle", async () => {
    const proxy = await create({
      type: "custom",
      name: "office",
      protocol: "http",
      bypass_hosts: ["localhost", "*.corp.example.com"],
      config: { host: "10.1.2.3", port: 3128, username: "alice", password: "s3cret-pw", ca_bundle: TEST_TLS.ca },
    });
    expect(proxy).toEqual({
      type: "custom",
      id: expect.any(String),
      name: "office",
      protocol: "http",
      bypass_hosts: ["localhost", "*.corp.example.com"],
      config: { host: "10.1.2.3", port: 3128, username: "alice", has_password: true, has_ca_bundle: true },
    });
  });

  it("reports a custom proxy without secrets as has_password and has_ca_bundle false", async () => {
    expect((await create(CUSTOM)).config).toEqual({
      host: "proxy.example.com",
      port: 3128,
      has_password: false,
      has_ca_bundle: false,
    });
  });

  describe("accepts", () => {
    it.each([
      ["a lower-case country, stored upper-case", { type: "datacenter", config: { country: "gb" } }, { country: "GB" }],
      ["an ASN of the form AS<number>", { type: "residential", config: { asn: "AS15169" } }, { asn: "AS15169" }],
      ["a two-letter residential state", { type: "residential", config: { state: "NY" } }, { state: "NY" }],
      ["a 5-digit ZIP code", { type: "residential", config: { zip: "10001" } }, { zip: "10001" }],
      ["a ZIP+4 code", { type: "residential", config: { zip: "10001-0001" } }, { zip: "10001-0001" }],
      [
        "a city with its country",
        { type: "residential", config: { city: "newyork", country: "US" } },
        { city: "newyork", country: "US" },
      ],
      ["a mobile US state without a country", { type: "mobile", config: { state: "TX" } }, { state: "TX" }],
      [
        "a custom host given as an IPv6 address",
        { ...CUSTOM, config: { host: "2001:db8::1", port: 8080 } },
        { host: "2001:db8::1" },
      ],
      ["custom port 1", { ...CUSTOM, config: { host: "proxy.example.com", port: 1 } }, { port: 1 }],
      ["custom port 65535", { ...CUSTOM, config: { host: "proxy.example.com", port: 65535 } }, { port: 65535 }],
      [
        "a password of exactly 5 characters",
        { ...CUSTOM, config: { ...CUSTOM.config, password: "12345" } },
        { has_password: true },
      ],
    ])("%s", async (_, body, expected) => {
      expect((await create(body)).config).toMatchObject(expected);
    });

    it("protocol http", async () => {
      expect((await create({ type: "datacenter", protocol: "http" })).protocol).toBe("http");
    });

    it("100 bypass hosts", async () => {
      const hosts = Array.from({ length: 100 }, (_, i) => `host${i}.example.com`);
      expect((await create({ type: "datacenter", bypass_hosts: hosts })).bypass_hosts).toEqual(hosts);
    });

    it("a bypass host of 253 characters", async () => {
      const host = `${"a.".repeat(125)}com`;
      expect((await create({ type: "datacenter", bypass_hosts: [host] })).bypass_hosts).toEqual([host]);
    });

    it("a name of 255 characters after trimming", async () => {
      const name = "n".repeat(255);
      expect((await create({ type: "datacenter", name: `  ${name}  ` })).name).toBe(name);
    });
  });

  describe("refuses with an invalid_input detail", () => {
    const long = `${TEST_TLS.ca}${"#".repeat(64 * 1024)}`;
    it.each([
      ["a missing type", {}, "type"],
      ["an unknown type", { type: "socks5" }, "type"],
      ["a country that is not ISO 3166-1 alpha-2", { type: "datacenter", config: { country: "XX" } }, "config.country"],
      ["the reserved code UK for an ISP proxy", { type: "isp", config: { country: "UK" } }, "config.country"],
      ["a three-letter country code", { type: "residential", config: { country: "USA" } }, "config.country"],
      ["a mobile country that is not ISO", { type: "mobile", config: { country: "ZZ" } }, "config.country"],
      ["an ASN without the AS prefix", { type: "residential", config: { asn: "7922" } }, "config.asn"],
      ["an ASN with letters after AS", { type: "residential", config: { asn: "ASN7922" } }, "config.asn"],
      ["a city with spaces", { type: "residential", config: { city: "san francisco", country: "US" } }, "config.city"],
      ["a city without a country", { type: "residential", config: { city: "sanfrancisco" } }, "config.country"],
      ["a three-letter state", { type: "residential", config: { state: "CAL" } }, "config.state"],
      ["a 4-digit ZIP code", { type: "residential", config: { zip: "1234" } }, "config.zip"],
      ["a 6-digit ZIP code", { type: "residential", config: { zip: "123456" } }, "config.zip"],
      ["a malformed ZIP+4", { type: "residential", config: { zip: "12345-12" } }, "config.zip"],
      ["an os other than windows, macos, android", { type: "residential", config: { os: "linux" } }, "config.os"],
      ["a mobile state that is not a US state", { type: "mobile", config: { state: "ON" } }, "config.state"],
      ["a mobile state outside the US", { type: "mobile", config: { state: "CA", country: "CA" } }, "config.state"],
      ["a custom proxy without config", { type: "custom" }, "config"],
      ["a custom proxy without host", { type: "custom", config: { port: 3128 } }, "config.host"],
      [
        "a custom host with a scheme",
        { type: "custom", config: { host: "http://proxy.example.com", port: 3128 } },
        "config.host",
      ],
      [
        "a custom host with a port",
        { type: "custom", config: { host: "proxy.example.com:3128", port: 3128 } },
        "config.host",
      ],
      ["a custom proxy without port", { type: "custom", config: { host: "proxy.example.com" } }, "config.port"],
      ["port 0", { type: "custom", config: { host: "proxy.example.com", port: 0 } }, "config.port"],
      ["port 65536", { type: "custom", config: { host: "proxy.example.com", port: 65536 } }, "config.port"],
      ["a fractional port", { type: "custom", config: { host: "proxy.example.com", port: 80.5 } }, "config.port"],
      [
        "a port given as a string",
        { type: "custom", config: { host: "proxy.example.com", port: "3128" } },
        "config.port",
      ],
      [
        "a password of 4 characters",
        { type: "custom", config: { ...CUSTOM.config, password: "1234" } },
        "config.password",
      ],
      [
        "a CA bundle that is not PEM",
        { type: "custom", config: { ...CUSTOM.config, ca_bundle: "trust me" } },
        "config.ca_bundle",
      ],
      [
        "a CA bundle over 64 KiB",
        { type: "custom", config: { ...CUSTOM.config, ca_bundle: long } },
        "config.ca_bundle",
      ],
      ["a field of another type's config", { type: "datacenter", config: { city: "berlin" } }, "config.city"],
      ["a password on a managed proxy", { type: "isp", config: { password: "s3cret-pw" } }, "config.password"],
      ["an unknown field", { type: "datacenter", colour: "blue" }, "colour"],
      ["a protocol other than http or https", { type: "datacenter", protocol: "socks5" }, "protocol"],
      ["bypass_hosts that is not an array", { type: "datacenter", bypass_hosts: "localhost" }, "bypass_hosts"],
      [
        "a bypass host of 254 characters",
        { type: "datacenter", bypass_hosts: [`${"a.".repeat(125)}com1`] },
        "bypass_hosts[0]",
      ],
      ["a bypass host that is an IP address", { type: "datacenter", bypass_hosts: ["10.0.0.1"] }, "bypass_hosts[0]"],
      [
        "a bypass host with a port",
        { type: "datacenter", bypass_hosts: ["ok.com", "example.com:443"] },
        "bypass_hosts[1]",
      ],
      ["a bypass host with a scheme", { type: "datacenter", bypass_hosts: ["https://example.com"] }, "bypass_hosts[0]"],
      ["a malformed wildcard", { type: "datacenter", bypass_hosts: ["*example.com"] }, "bypass_hosts[0]"],
      ["a whitespace-only name", { type: "datacenter", name: " \t\n " }, "name"],
      ["a name of 256 characters after trimming", { type: "datacenter", name: ` ${"n".repeat(256)} ` }, "name"],
      ["a name that is not a string", { type: "datacenter", name: 42 }, "name"],
    ])("%s", async (_, body, field) => {
      await expectInvalidInput(await post(body), field);
    });

    it("101 bypass hosts", async () => {
      const hosts = Array.from({ length: 101 }, (_, i) => `host${i}.example.com`);
      await expectInvalidInput(await post({ type: "datacenter", bypass_hosts: hosts }), "bypass_hosts");
    });
  });

  it("reports every problem of a request, one detail each", async () => {
    const body = await expectError(
      await post({ type: "custom", name: "", config: { host: "x:1", port: 0, password: "1" } }),
      400,
      "bad_request",
    );
    expect(body.details?.map((detail) => detail.message.split(":")[0])).toEqual([
      "name",
      "config.host",
      "config.port",
      "config.password",
    ]);
  });

  it("answers 400 invalid_request when the body is not JSON", async () => {
    const res = await system.api("/proxies", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{",
    });
    await expectError(res, 400, "invalid_request");
  });
});

describe("PATCH /proxies/{id}", () => {
  it("renames the proxy and answers with the updated record", async () => {
    const proxy = await create({ type: "datacenter", name: "before" });
    expect(await expectProxy(await rename(proxy.id, { name: "after" }))).toEqual({ ...proxy, name: "after" });
    expect(await expectProxy(await get(proxy.id))).toEqual({ ...proxy, name: "after" });
  });

  it("trims the name with String.prototype.trim, non-ASCII whitespace included", async () => {
    const proxy = await create();
    expect((await expectProxy(await rename(proxy.id, { name: "\u00a0\u3000 spaced out \t\n" }))).name).toBe(
      "spaced out",
    );
  });

  it("accepts a name of 255 characters after trimming", async () => {
    const proxy = await create();
    const name = "x".repeat(255);
    expect((await expectProxy(await rename(proxy.id, { name: `   ${name}   ` }))).name).toBe(name);
  });

  it("refuses a name of 256 characters after trimming", async () => {
    const proxy = await create();
    await expectInvalidInput(await rename(proxy.id, { name: ` ${"x".repeat(256)} ` }), "name");
  });

  it("accepts a one-character name", async () => {
    const proxy = await create();
    expect((await expectProxy(await rename(proxy.id, { name: " a " }))).name).toBe("a");
  });

  it("refuses an empty name", async () => {
    const proxy = await create();
    await expectInvalidInput(await rename(proxy.id, { name: "" }), "name");
  });

  it("refuses a whitespace-only name", async () => {
    const proxy = await create();
    await expectInvalidInput(await rename(proxy.id, { name: " \t\u00a0\n " }), "name");
  });

  it("refuses a body without name", async () => {
    const proxy = await create();
    await expectInvalidInput(await rename(proxy.id, {}), "name");
  });

  it.each([
    ["a number", 42],
    ["null", null],
    ["a boolean", true],
    ["an array", ["name"]],
    ["an object", { value: "name" }],
  ])("refuses a name that is %s", async (_, name) => {
    const proxy = await create();
    await expectInvalidInput(await rename(proxy.id, { name }), "name");
  });

  it("refuses fields other than name, and changes nothing", async () => {
    const proxy = await create({ type: "datacenter", name: "kept" });
    await expectInvalidInput(await rename(proxy.id, { name: "changed", status: "available" }), "status");
    expect(await expectProxy(await get(proxy.id))).toEqual(proxy);
  });

  it("refuses a request without a body", async () => {
    const proxy = await create();
    await expectInvalidInput(await system.api(`/proxies/${proxy.id}`, { method: "PATCH" }), "body");
  });

  it("allows two proxies to share a name", async () => {
    const first = await create({ type: "datacenter", name: "shared" });
    const second = await create();
    expect((await expectProxy(await rename(second.id, { name: "shared" }))).name).toBe("shared");
    expect((await expectProxy(await get(first.id))).name).toBe("shared");
  });

  it("changes nothing but the name: status, config, ip_address and last_checked stay as they were", async () => {
    const proxy = await create({
      type: "custom",
      protocol: "http",
      bypass_hosts: ["localhost"],
      config: { host: "proxy.example.com", port: 3128, username: "bob", password: "s3cret-pw" },
    });
    await system.store.proxies.recordCheck(system.organizationId, proxy.id, {
      status: "unavailable",
      ipAddress: "203.0.113.50",
      checkedAt: "2030-01-02T03:04:05.678Z",
    });
    const checked = await expectProxy(await get(proxy.id));
    expect(checked).toMatchObject({
      status: "unavailable",
      ip_address: "203.0.113.50",
      last_checked: "2030-01-02T03:04:05.678Z",
    });
    expect(await expectProxy(await rename(proxy.id, { name: "renamed" }))).toEqual({ ...checked, name: "renamed" });
  });

  it("answers 404 not_found for an unknown id", async () => {
    await expectError(await rename("no-such-proxy", { name: "x" }), 404, "not_found");
  });

  it("answers 404 for a proxy's name in place of its id", async () => {
    await create({ type: "datacenter", name: "by-name-only" });
    await expectError(await rename("by-name-only", { name: "x" }), 404, "not_found");
  });

  it("answers 404 for another organization's proxy and leaves it unchanged", async () => {
    const theirs = await create({ type: "datacenter", name: "theirs" }, (await newOrganization()).api);
    await expectError(await rename(theirs.id, { name: "mine now" }), 404, "not_found");
    const rows = await system.store.sql.query<{ name: string }>("SELECT name FROM proxies WHERE id = $1", [theirs.id]);
    expect(rows).toEqual([{ name: "theirs" }]);
  });

  it("answers 401 with the Error body without a valid token", async () => {
    const proxy = await create();
    const res = await rename(proxy.id, { name: "x" }, (path, init) =>
      system.api(path, {
        ...init,
        headers: { ...(init?.headers as Record<string, string>), authorization: "Bearer nope" },
      }),
    );
    await expectError(res, 401, "unauthorized");
  });
});

describe("GET /proxies/{id}", () => {
  it("answers with the proxy as created", async () => {
    const proxy = await create({ type: "residential", config: { country: "FR" } });
    expect(await expectProxy(await get(proxy.id))).toEqual(proxy);
  });

  it("answers 404 not_found for an unknown id", async () => {
    await expectError(await get("no-such-proxy"), 404, "not_found");
  });

  it("answers 404 for another organization's proxy", async () => {
    const theirs = await create({ type: "datacenter" }, (await newOrganization()).api);
    await expectError(await get(theirs.id), 404, "not_found");
  });
});

describe("DELETE /proxies/{id}", () => {
  it("answers 204 with no body", async () => {
    const proxy = await create();
    const res = await system.api(`/proxies/${proxy.id}`, { method: "DELETE" });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
  });

  it("removes the proxy from every read and every operation", async () => {
    const { api } = await newOrganization();
    const proxy = await create({ type: "datacenter", name: "gone" }, api);
    expect((await api(`/proxies/${proxy.id}`, { method: "DELETE" })).status).toBe(204);
    await expectError(await get(proxy.id, api), 404, "not_found");
    await expectError(await rename(proxy.id, { name: "back" }, api), 404, "not_found");
    await expectError(await api(`/proxies/${proxy.id}/check`, json("POST")), 404, "not_found");
    await expectError(await api(`/proxies/${proxy.id}`, { method: "DELETE" }), 404, "not_found");
    expect((await list("", api)).ids).toEqual([]);
    expect((await list(`?query=${proxy.id}`, api)).ids).toEqual([]);
    expect((await list("?name=gone", api)).ids).toEqual([]);
  });

  it("keeps the row in the store (a soft delete)", async () => {
    const proxy = await create();
    await system.api(`/proxies/${proxy.id}`, { method: "DELETE" });
    const rows = await system.store.sql.query<{ deleted_at: string | null }>(
      "SELECT deleted_at FROM proxies WHERE id = $1",
      [proxy.id],
    );
    expect(rows).toEqual([{ deleted_at: expect.any(String) }]);
  });

  it("answers 404 for another organization's proxy and leaves it in place", async () => {
    const { api } = await newOrganization();
    const theirs = await create({ type: "datacenter" }, api);
    await expectError(await system.api(`/proxies/${theirs.id}`, { method: "DELETE" }), 404, "not_found");
    await expectProxy(await get(theirs.id, api));
  });
});

describe("GET /proxies", () => {
  it("lists the organization's proxies oldest first", async () => {
    const { api } = await newOrganization();
    const ids = [(await create({ type: "datacenter" }, api)).id, (await create({ type: "mobile" }, api)).id];
    expect((await list("", api)).ids).toEqual(ids);
  });

  it("answers with full proxy records", async () => {
    const { api } = await newOrganization();
    const proxy = await create(CUSTOM, api);
    const res = await api("/proxies");
    expect(await res.json()).toEqual([proxy]);
  });

  it("never lists another organization's proxies", async () => {
    const { api } = await newOrganization();
    await create({ type: "datacenter" }, (await newOrganization()).api);
    expect((await list("", api)).ids).toEqual([]);
  });

  it("pages with limit and offset, saying in X-Has-More and X-Next-Offset where the next page starts", async () => {
    const { api } = await newOrganization();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create({ type: "datacenter" }, api)).id);
    const first = await list("?limit=2", api);
    expect(first.ids).toEqual(ids.slice(0, 2));
    expect(first.res.headers.get("x-has-more")).toBe("true");
    expect(first.res.headers.get("x-next-offset")).toBe("2");
    const second = await list("?limit=2&offset=2", api);
    expect(second.ids).toEqual(ids.slice(2, 4));
    expect(second.res.headers.get("x-next-offset")).toBe("4");
    const last = await list("?limit=2&offset=4", api);
    expect(last.ids).toEqual(ids.slice(4));
    expect(last.res.headers.get("x-has-more")).toBe("false");
    expect(last.res.headers.get("x-next-offset")).toBe("0");
  });

  it("answers an empty page beyond the end", async () => {
    const { api } = await newOrganization();
    await create({ type: "datacenter" }, api);
    const page = await list("?offset=10", api);
    expect(page.ids).toEqual([]);
    expect(page.res.headers.get("x-has-more")).toBe("false");
  });

  it("returns 20 proxies per page by default", async () => {
    const { api } = await newOrganization();
    for (let i = 0; i < 21; i++) await create({ type: "datacenter" }, api);
    const page = await list("", api);
    expect(page.ids).toHaveLength(20);
    expect(page.res.headers.get("x-has-more")).toBe("true");
    expect(page.res.headers.get("x-next-offset")).toBe("20");
  });

  it("accepts limit 100", async () => {
    await list("?limit=100", system.api);
  });

  it.each([
    ["limit 0", "?limit=0", "limit"],
    ["limit 101", "?limit=101", "limit"],
    ["a limit that is not a number", "?limit=ten", "limit"],
    ["a negative offset", "?offset=-1", "offset"],
    ["a fractional offset", "?offset=1.5", "offset"],
    ["limit given twice", "?limit=1&limit=2", "limit"],
    ["an unknown parameter", "?sort=name", "sort"],
  ])("refuses %s with an invalid_input detail", async (_, query, field) => {
    await expectInvalidInput(await system.api(`/proxies${query}`), field);
  });

  it("filters by exact name, case-insensitively", async () => {
    const { api } = await newOrganization();
    const match = await create({ type: "datacenter", name: "Edge Node" }, api);
    const twin = await create({ type: "isp", name: "edge node" }, api);
    await create({ type: "datacenter", name: "Edge Node 2" }, api);
    expect((await list("?name=EDGE%20NODE", api)).ids).toEqual([match.id, twin.id]);
  });

  it("finds by a case-insensitive substring of the name", async () => {
    const { api } = await newOrganization();
    const match = await create({ type: "datacenter", name: "Frankfurt Datacenter" }, api);
    await create({ type: "datacenter", name: "Paris" }, api);
    expect((await list("?query=furt%20DATA", api)).ids).toEqual([match.id]);
  });

  it("finds by a substring of a custom proxy's host", async () => {
    const { api } = await newOrganization();
    const match = await create({ ...CUSTOM, config: { host: "squid.corp.example.com", port: 3128 } }, api);
    await create(CUSTOM, api);
    expect((await list("?query=SQUID.corp", api)).ids).toEqual([match.id]);
  });

  it("finds by a substring of the IP address", async () => {
    const { api, organizationId } = await newOrganization();
    const match = await create(CUSTOM, api);
    await create(CUSTOM, api);
    // What a health check would have learned.
    await system.store.proxies.recordCheck(organizationId, match.id, {
      status: "available",
      ipAddress: "203.0.113.99",
      checkedAt: new Date().toISOString(),
    });
    expect((await list("?query=113.9", api)).ids).toEqual([match.id]);
  });

  it("finds by id only when the whole id is given", async () => {
    const { api } = await newOrganization();
    const match = await create({ type: "datacenter", name: "plain" }, api);
    await create({ type: "datacenter", name: "other" }, api);
    expect((await list(`?query=${match.id}`, api)).ids).toEqual([match.id]);
    expect((await list(`?query=${match.id.slice(0, 12)}`, api)).ids).toEqual([]);
  });
});
