import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import {
  expectError,
  expectInvalidInput,
  expectProxy,
  json,
  type ProxyBody,
} from "../../packages/gateway/test/proxies/http-expect.ts";
import {
  ECHOED_IP,
  type Listening,
  type LoopbackProxy,
  startLoopbackProxy,
  startTargetSite,
  TEST_TLS,
} from "../../packages/gateway/test/proxies/loopback-proxy.ts";
import { freePort } from "../support/ports.ts";
import { type System, startSystem } from "../support/system.ts";

const CREDENTIALS = { username: "checker", password: "c0rrect-horse" };

let system: System;
let site: Listening;
let plain: LoopbackProxy;
let guarded: LoopbackProxy;
let secure: LoopbackProxy;

beforeAll(async () => {
  [site, plain, guarded, secure] = await Promise.all([
    startTargetSite(),
    startLoopbackProxy(),
    startLoopbackProxy({ credentials: CREDENTIALS }),
    startLoopbackProxy({ tls: true }),
  ]);
  // The default target is an IP-echo page on loopback, standing in for a public checkip service.
  // The test proxies listen on loopback, which checks may reach only when the operator allows it.
  system = await startSystem({
    store: "sqlite",
    gatewayEnv: { PROXY_CHECK_URL: `${site.url}/ip`, PROXY_ALLOWED_NETWORKS: "127.0.0.0/8" },
  });
});

afterAll(async () => {
  await system?.stop();
  await Promise.all([site, plain, guarded, secure].map((server) => server?.close()));
});

async function create(config: Record<string, unknown>, protocol = "http"): Promise<ProxyBody> {
  return expectProxy(await system.api("/proxies", json("POST", { type: "custom", protocol, config })));
}

function check(id: string, body?: unknown): Promise<Response> {
  return system.api(`/proxies/${encodeURIComponent(id)}/check`, json("POST", body));
}

async function get(id: string): Promise<ProxyBody> {
  return expectProxy(await system.api(`/proxies/${id}`));
}

describe("POST /proxies/{id}/check on a custom proxy", () => {
  it("marks a proxy that fetches the default target as available, with the address it exits from", async () => {
    const proxy = await create({ host: "127.0.0.1", port: plain.port });
    const before = new Date().toISOString();
    const checked = await expectProxy(await check(proxy.id));
    expect(checked).toEqual({ ...proxy, status: "available", ip_address: ECHOED_IP, last_checked: expect.any(String) });
    expect(checked.last_checked && checked.last_checked >= before).toBe(true);
    expect(await get(proxy.id)).toEqual(checked);
  });

  it("really sends the check request through the proxy", async () => {
    const proxy = await create({ host: "127.0.0.1", port: plain.port });
    await check(proxy.id);
    expect(plain.requests).toContainEqual(expect.objectContaining({ method: "GET", target: `${site.url}/ip` }));
  });

  it("explains the outcome in the x-proxy-check-message header", async () => {
    const proxy = await create({ host: "127.0.0.1", port: plain.port });
    const res = await check(proxy.id);
    expect(res.headers.get("x-proxy-check-message")).toBe(`reached ${site.url} through the proxy (HTTP 200)`);
  });

  it("marks a proxy on a closed port as unavailable and says why", async () => {
    const proxy = await create({ host: "127.0.0.1", port: await freePort() });
    const res = await check(proxy.id);
    const checked = await expectProxy(res);
    expect(checked).toMatchObject({ status: "unavailable", last_checked: expect.any(String) });
    expect(checked.ip_address).toBeUndefined();
    expect(res.headers.get("x-proxy-check-message")).toMatch(/cannot connect to 127\.0\.0\.1:\d+: .*ECONNREFUSED/);
    expect((await get(proxy.id)).status).toBe("unavailable");
  });

  it("turns an unavailable proxy available again once it works", async () => {
    const port = await freePort();
    const proxy = await create({ host: "127.0.0.1", port });
    expect((await expectProxy(await check(proxy.id))).status).toBe("unavailable");
    const revived = await startLoopbackProxy({ port });
    try {
      expect((await expectProxy(await check(proxy.id))).status).toBe("available");
    } finally {
      await revived.close();
    }
  });

  it("authenticates with the stored username and password", async () => {
    const proxy = await create({ host: "127.0.0.1", port: guarded.port, ...CREDENTIALS });
    expect((await expectProxy(await check(proxy.id))).status).toBe("available");
  });

  it("marks a proxy that refuses the stored credentials as unavailable, with HTTP 407", async () => {
    const proxy = await create({
      host: "127.0.0.1",
      port: guarded.port,
      username: "checker",
      password: "wrong-password",
    });
    const res = await check(proxy.id);
    expect((await expectProxy(res)).status).toBe("unavailable");
    expect(res.headers.get("x-proxy-check-message")).toContain("407");
  });

  it("speaks TLS to an https proxy and trusts it through the stored CA bundle", async () => {
    const proxy = await create({ host: "localhost", port: secure.port, ca_bundle: TEST_TLS.ca }, "https");
    expect((await expectProxy(await check(proxy.id))).status).toBe("available");
  });

  it("marks an https proxy whose certificate nothing trusts as unavailable", async () => {
    const proxy = await create({ host: "localhost", port: secure.port }, "https");
    const res = await check(proxy.id);
    expect((await expectProxy(res)).status).toBe("unavailable");
    expect(res.headers.get("x-proxy-check-message")).toContain("TLS handshake with the proxy");
  });

  it("checks against the url given instead of the default target", async () => {
    const proxy = await create({ host: "127.0.0.1", port: plain.port });
    const url = `${site.url}/page?from=check`;
    expect((await expectProxy(await check(proxy.id, { url }))).status).toBe("available");
    expect(plain.requests).toContainEqual(expect.objectContaining({ method: "GET", target: url }));
  });

  it("reports a failure against the url given without changing the proxy's status", async () => {
    const proxy = await create({ host: "127.0.0.1", port: plain.port });
    const healthy = await expectProxy(await check(proxy.id));
    const res = await check(proxy.id, { url: `${site.url}/status/503` });
    const answer = await expectProxy(res);
    expect(answer.status).toBe("unavailable");
    expect(res.headers.get("x-proxy-check-message")).toBe(`${site.url} answered HTTP 503 through the proxy`);
    const stored = await get(proxy.id);
    expect(stored.status).toBe("available");
    expect(stored.last_checked && healthy.last_checked && stored.last_checked >= healthy.last_checked).toBe(true);
  });

  it("never takes an address from the answer of the caller's url as ip_address", async () => {
    const proxy = await create({ host: "127.0.0.1", port: plain.port });
    const checked = await expectProxy(await check(proxy.id, { url: `${site.url}/ip` }));
    expect(checked.ip_address).toBe("127.0.0.1");
    expect((await get(proxy.id)).ip_address).toBe("127.0.0.1");
  });

  it("leaves a never-checked proxy without status after a check against a url", async () => {
    const proxy = await create({ host: "127.0.0.1", port: plain.port });
    await check(proxy.id, { url: `${site.url}/page` });
    expect((await get(proxy.id)).status).toBeUndefined();
  });

  it("keeps status, ip_address, last_checked and config through a later rename", async () => {
    const proxy = await create({ host: "127.0.0.1", port: plain.port, username: "u", password: "p4ssword" });
    const checked = await expectProxy(await check(proxy.id));
    const renamed = await expectProxy(await system.api(`/proxies/${proxy.id}`, json("PATCH", { name: "renamed" })));
    expect(renamed).toEqual({ ...checked, name: "renamed" });
  });
});

describe("POST /proxies/{id}/check on a managed proxy", () => {
  it.each(["datacenter", "isp", "residential", "mobile"])(
    "reports a %s proxy without an upstream template unavailable, naming the setting",
    async (type) => {
      const proxy = await expectProxy(await system.api("/proxies", json("POST", { type })));
      const res = await check(proxy.id);
      expect(await expectProxy(res)).toEqual({ ...proxy, status: "unavailable", last_checked: expect.any(String) });
      expect(res.headers.get("x-proxy-check-message")).toContain(
        `no upstream is configured for ${type} proxies on this gateway: the operator sets PROXY_URL_TEMPLATE_${type.toUpperCase()}`,
      );
      expect((await get(proxy.id)).status).toBe("unavailable");
    },
  );
});

describe("POST /proxies/{id}/check refusals", () => {
  it.each([
    ["a url with another scheme", { url: "ftp://example.com/" }, "url"],
    ["a url that is not a URL", { url: "not a url" }, "url"],
    ["a url with credentials", { url: "http://user:pw@example.com/" }, "url"],
    ["a url that is not a string", { url: 42 }, "url"],
    ["an unknown field", { url: "http://example.com/", retries: 3 }, "retries"],
  ])("refuses %s with an invalid_input detail", async (_, body, field) => {
    const proxy = await create({ host: "127.0.0.1", port: plain.port });
    await expectInvalidInput(await check(proxy.id, body), field);
  });

  it.each([
    ["::1", "loopback"],
    ["169.254.169.254", "link-local"],
  ])("refuses a proxy at %s, outside PROXY_ALLOWED_NETWORKS=127.0.0.0/8, as %s", async (host, category) => {
    const proxy = await create({ host, port: plain.port });
    const res = await check(proxy.id);
    expect((await expectProxy(res)).status).toBe("unavailable");
    expect(res.headers.get("x-proxy-check-message")).toBe(
      `the proxy's address is not allowed: ${category}; see PROXY_ALLOWED_NETWORKS`,
    );
  });

  it("answers 404 not_found for an unknown id", async () => {
    await expectError(await check("no-such-proxy"), 404, "not_found");
  });

  it("answers 404 for another organization's proxy and does not check it", async () => {
    const { key } = await createApiKey(system.store, "check-other-org", "test");
    const theirs = await expectProxy(
      await system.api("/proxies", {
        ...json("POST", { type: "custom", protocol: "http", config: { host: "127.0.0.1", port: plain.port } }),
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      }),
    );
    await expectError(await check(theirs.id), 404, "not_found");
    const [row] = await system.store.sql.query<{ last_checked: string | null }>(
      "SELECT last_checked FROM proxies WHERE id = $1",
      [theirs.id],
    );
    expect(row?.last_checked).toBeNull();
  });
});
