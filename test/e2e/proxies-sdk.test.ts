import Kernel, { BadRequestError, NotFoundError } from "@onkernel/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import {
  ECHOED_IP,
  type Listening,
  type LoopbackProxy,
  startLoopbackProxy,
  startTargetSite,
} from "../../packages/gateway/test/proxies/loopback-proxy.ts";
import { freePort } from "../support/ports.ts";
import { type System, startSystem } from "../support/system.ts";

let system: System;
let site: Listening;
let proxyServer: LoopbackProxy;
let client: Kernel;

beforeAll(async () => {
  [site, proxyServer] = await Promise.all([startTargetSite(), startLoopbackProxy()]);
  // The test's proxy listens on loopback, which a proxy check may reach only when allowed.
  system = await startSystem({
    store: "sqlite",
    gatewayEnv: { PROXY_CHECK_URL: `${site.url}/ip`, PROXY_ALLOWED_NETWORKS: "127.0.0.0/8" },
  });
  client = new Kernel({ apiKey: system.apiKey, baseURL: system.gateway.url });
});

afterAll(async () => {
  await system?.stop();
  await Promise.all([site, proxyServer].map((server) => server?.close()));
});

describe("the proxies resource of @onkernel/sdk, unmodified, against the gateway", () => {
  it("creates a datacenter proxy with the defaults filled in", async () => {
    const proxy = await client.proxies.create({ type: "datacenter", name: "sdk-dc" });
    expect(proxy).toEqual({
      type: "datacenter",
      id: expect.any(String),
      name: "sdk-dc",
      protocol: "https",
      bypass_hosts: [],
      config: { country: "US" },
    });
  });

  it("creates a custom proxy whose password comes back only as has_password", async () => {
    const proxy = await client.proxies.create({
      type: "custom",
      name: "sdk-custom",
      protocol: "http",
      config: { host: "127.0.0.1", port: proxyServer.port, username: "sdk", password: "sdk-password" },
    });
    expect(proxy.config).toEqual({
      host: "127.0.0.1",
      port: proxyServer.port,
      username: "sdk",
      has_password: true,
      has_ca_bundle: false,
    });
  });

  it("renames with update and reads the new name back with retrieve", async () => {
    const created = await client.proxies.create({ type: "isp", name: "old" });
    const updated = await client.proxies.update(created.id as string, { name: "  new  " });
    expect(updated).toEqual({ ...created, name: "new" });
    expect(await client.proxies.retrieve(created.id as string)).toEqual(updated);
  });

  it("surfaces a whitespace-only name as BadRequestError with an invalid_input detail", async () => {
    const created = await client.proxies.create({ type: "isp" });
    const error = await client.proxies.update(created.id as string, { name: "   " }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).error).toMatchObject({
      code: "bad_request",
      details: [{ code: "invalid_input", message: expect.stringMatching(/^name: /) }],
    });
  });

  it("walks every page of list with auto-pagination, in order", async () => {
    const { key } = await createApiKey(system.store, "sdk-pagination-org", "test");
    const own = new Kernel({ apiKey: key, baseURL: system.gateway.url });
    const ids: string[] = [];
    for (let i = 0; i < 7; i++)
      ids.push((await own.proxies.create({ type: "datacenter", name: `p${i}` })).id as string);
    const seen: string[] = [];
    for await (const proxy of own.proxies.list({ limit: 3 })) seen.push(proxy.id as string);
    expect(seen).toEqual(ids);
  });

  it("filters list by name and by query", async () => {
    const { key } = await createApiKey(system.store, "sdk-filter-org", "test");
    const own = new Kernel({ apiKey: key, baseURL: system.gateway.url });
    const match = await own.proxies.create({ type: "mobile", name: "Needle" });
    await own.proxies.create({ type: "mobile", name: "haystack" });
    expect((await own.proxies.list({ name: "needle" })).getPaginatedItems().map((p) => p.id)).toEqual([match.id]);
    expect((await own.proxies.list({ query: "eed" })).getPaginatedItems().map((p) => p.id)).toEqual([match.id]);
  });

  it("deletes, after which retrieve raises NotFoundError", async () => {
    const created = await client.proxies.create({ type: "residential", config: { country: "DE" } });
    await client.proxies.delete(created.id as string);
    await expect(client.proxies.retrieve(created.id as string)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("checks a custom proxy through the proxy and reports it available with its exit address", async () => {
    const created = await client.proxies.create({
      type: "custom",
      protocol: "http",
      config: { host: "127.0.0.1", port: proxyServer.port },
    });
    const checked = await client.proxies.check(created.id as string);
    expect(checked).toMatchObject({ status: "available", ip_address: ECHOED_IP, last_checked: expect.any(String) });
  });

  it("checks against a url given to check", async () => {
    const created = await client.proxies.create({
      type: "custom",
      protocol: "http",
      config: { host: "127.0.0.1", port: proxyServer.port },
    });
    const url = `${site.url}/page?from=sdk`;
    expect((await client.proxies.check(created.id as string, { url })).status).toBe("available");
    expect(proxyServer.requests).toContainEqual(expect.objectContaining({ target: url }));
  });

  it("checks a custom proxy on a closed port and reports it unavailable", async () => {
    const created = await client.proxies.create({
      type: "custom",
      protocol: "http",
      config: { host: "127.0.0.1", port: await freePort() },
    });
    expect((await client.proxies.check(created.id as string)).status).toBe("unavailable");
  });

  it("raises NotFoundError for every operation on an unknown id", async () => {
    const attempts = [
      () => client.proxies.retrieve("missing"),
      () => client.proxies.update("missing", { name: "x" }),
      () => client.proxies.delete("missing"),
      () => client.proxies.check("missing"),
    ];
    for (const attempt of attempts) await expect(attempt()).rejects.toBeInstanceOf(NotFoundError);
  });
});
