import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectProxy, json, type ProxyBody } from "../../packages/gateway/test/proxies/http-expect.ts";
import { type System, startSystem } from "../support/system.ts";

/** A raw listener that counts connections and drops each at once, so a check that got through fails fast. */
interface CountingListener {
  port: number;
  connections: number;
  close(): Promise<void>;
}

async function startCountingListener(host: string): Promise<CountingListener> {
  const server = net.createServer((socket) => {
    listener.connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const listener: CountingListener = {
    port: (server.address() as net.AddressInfo).port,
    connections: 0,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return listener;
}

let system: System;
let ipv4: CountingListener;
let ipv6: CountingListener;

beforeAll(async () => {
  [ipv4, ipv6] = await Promise.all([startCountingListener("127.0.0.1"), startCountingListener("::1")]);
  // No PROXY_ALLOWED_NETWORKS: the default policy.
  system = await startSystem({ store: "sqlite" });
});

afterAll(async () => {
  await system?.stop();
  await Promise.all([ipv4, ipv6].map((listener) => listener?.close()));
});

async function create(host: string, port: number): Promise<ProxyBody> {
  return expectProxy(
    await system.api("/proxies", json("POST", { type: "custom", protocol: "http", config: { host, port } })),
  );
}

function check(id: string, body?: unknown): Promise<Response> {
  return system.api(`/proxies/${id}/check`, json("POST", body));
}

function refusal(category: string): string {
  return `the proxy's address is not allowed: ${category}; see PROXY_ALLOWED_NETWORKS`;
}

describe("POST /proxies/{id}/check under the default address policy", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["localhost", "loopback"],
    ["::ffff:127.0.0.1", "loopback"],
    ["0.0.0.0", "unspecified"],
  ])(
    "refuses a proxy at %s as %s without connecting to the IPv4 loopback listener behind it",
    async (host, category) => {
      const proxy = await create(host, ipv4.port);
      const res = await check(proxy.id);
      expect(await expectProxy(res)).toEqual({ ...proxy, status: "unavailable", last_checked: expect.any(String) });
      expect(res.headers.get("x-proxy-check-message")).toBe(refusal(category));
      const stored = await expectProxy(await system.api(`/proxies/${proxy.id}`));
      expect(stored.status).toBe("unavailable");
      expect(ipv4.connections).toBe(0);
    },
  );

  it("refuses a proxy at ::1 without connecting to the IPv6 loopback listener behind it", async () => {
    const proxy = await create("::1", ipv6.port);
    const res = await check(proxy.id);
    expect((await expectProxy(res)).status).toBe("unavailable");
    expect(res.headers.get("x-proxy-check-message")).toBe(refusal("loopback"));
    expect(ipv6.connections).toBe(0);
  });

  it("refuses a proxy at the cloud metadata address 169.254.169.254 at once", async () => {
    const proxy = await create("169.254.169.254", 80);
    const started = Date.now();
    const res = await check(proxy.id);
    expect((await expectProxy(res)).status).toBe("unavailable");
    expect(res.headers.get("x-proxy-check-message")).toBe(refusal("link-local"));
    // No connection attempt, so no wait for one that nothing on this machine answers.
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("refuses a proxy at the gateway's own port, which never sees the proxied request", async () => {
    const proxy = await create("127.0.0.1", system.gateway.port);
    const marker = "http://own-port-probe.invalid/never-sent";
    const res = await check(proxy.id, { url: marker });
    expect((await expectProxy(res)).status).toBe("unavailable");
    expect(res.headers.get("x-proxy-check-message")).toBe(refusal("loopback"));
    expect((await system.gateway.settledLines()).filter((line) => line.includes("own-port-probe"))).toEqual([]);
  });

  it("does not say which address a refused name resolved to", async () => {
    const proxy = await create("localhost", ipv4.port);
    const message = (await check(proxy.id)).headers.get("x-proxy-check-message");
    expect(message).toBe(refusal("loopback"));
    expect(message).not.toContain("127.0.0.1");
  });
});
