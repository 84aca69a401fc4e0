import http from "node:http";
import type { AddressInfo } from "node:net";
import { type ProxyRoute, ProxyRouteSchema } from "@browser-infra/contract";
import { create } from "@bufbuild/protobuf";
import pino from "pino";
import { Server } from "proxy-chain";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { matchesBypass } from "../../src/proxy-relay/bypass.ts";
import { ProxyRelay } from "../../src/proxy-relay/relay.ts";

interface Seen {
  username: string;
  password: string;
  hostname: string;
}

/** An upstream proxy that demands Basic credentials and records every request it carries. */
async function recordingProxy(): Promise<{ server: Server; seen: Seen[]; port: number }> {
  const seen: Seen[] = [];
  const server = new Server({
    host: "127.0.0.1",
    port: 0,
    prepareRequestFunction: ({ username, password, hostname }) => {
      seen.push({ username, password, hostname });
      return { requestAuthentication: username !== "alice" || password !== "s3cret:/@" };
    },
  });
  await server.listen();
  return { server, seen, port: server.port };
}

/** A GET of `url` with the relay as the HTTP proxy: the status and body it answered. */
function getThrough(relayPort: number, url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const request = http.request(
      { host: "127.0.0.1", port: relayPort, path: url, headers: { host: target.host }, agent: false },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          body += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    request.on("error", reject);
    request.end();
  });
}

function route(port: number, fields: { bypassHosts?: string[]; allowedNetworks?: string[] } = {}): ProxyRoute {
  return create(ProxyRouteSchema, {
    protocol: "http",
    host: "127.0.0.1",
    port,
    username: "alice",
    password: "s3cret:/@",
    allowedNetworks: ["127.0.0.0/8"],
    ...fields,
  });
}

describe("the agent's proxy relay", () => {
  let relay: ProxyRelay;
  let upstream: Awaited<ReturnType<typeof recordingProxy>>;
  let site: http.Server;
  let siteRequests: number;
  let sitePort: number;

  beforeEach(async () => {
    relay = await ProxyRelay.start(pino({ level: "silent" }));
    upstream = await recordingProxy();
    siteRequests = 0;
    site = http.createServer((_request, response) => {
      siteRequests++;
      response.end("the page");
    });
    await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
    sitePort = (site.address() as AddressInfo).port;
  });

  afterEach(async () => {
    await relay.close();
    await upstream.server.close(true);
    site.closeAllConnections();
    await new Promise((resolve) => site.close(resolve));
  });

  it("refuses everything while no session runs (a warm spare's browser reaches nothing)", async () => {
    const answer = await getThrough(relay.port, `http://127.0.0.1:${sitePort}/`);
    expect(answer.status).toBe(502);
    expect(siteRequests).toBe(0);
  });

  it("sends a session's requests through its proxy, with the proxy's credentials", async () => {
    relay.use(route(upstream.port));
    const answer = await getThrough(relay.port, `http://127.0.0.1:${sitePort}/page`);
    expect(answer).toEqual({ status: 200, body: "the page" });
    expect(upstream.seen).toEqual([{ username: "alice", password: "s3cret:/@", hostname: "127.0.0.1" }]);
  });

  it("sends a session without a proxy straight to the site", async () => {
    relay.use(undefined);
    expect((await getThrough(relay.port, `http://127.0.0.1:${sitePort}/`)).status).toBe(200);
    expect(upstream.seen).toEqual([]);
  });

  it("sends bypass hosts straight to the site, and only those", async () => {
    relay.use(route(upstream.port, { bypassHosts: ["localhost"] }));
    expect((await getThrough(relay.port, `http://localhost:${sitePort}/`)).status).toBe(200);
    expect(upstream.seen).toEqual([]);
    expect((await getThrough(relay.port, `http://127.0.0.1:${sitePort}/`)).status).toBe(200);
    expect(upstream.seen).toHaveLength(1);
  });

  it("refuses a proxy on loopback under the default address policy, connecting nowhere", async () => {
    relay.use(route(upstream.port, { allowedNetworks: [] }));
    const answer = await getThrough(relay.port, `http://127.0.0.1:${sitePort}/`);
    expect(answer.status).toBe(502);
    expect(answer.body).toContain("loopback");
    expect(upstream.seen).toEqual([]);
    expect(siteRequests).toBe(0);
  });

  it("answers a proxy error, never a direct fetch, when the session's proxy is gone", async () => {
    relay.use(route(upstream.port));
    await upstream.server.close(true);
    const answer = await getThrough(relay.port, `http://127.0.0.1:${sitePort}/`);
    expect(answer.status).toBeGreaterThanOrEqual(500);
    expect(siteRequests).toBe(0);
  });

  it("refuses again once the session's fence cleared it", async () => {
    relay.use(route(upstream.port));
    expect((await getThrough(relay.port, `http://127.0.0.1:${sitePort}/`)).status).toBe(200);
    relay.clear();
    expect((await getThrough(relay.port, `http://127.0.0.1:${sitePort}/`)).status).toBe(502);
    expect(siteRequests).toBe(1);
  });
});

describe("bypass host rules", () => {
  it("match a host exactly, case folded, and *.domain every name under the domain but not the domain", () => {
    expect(matchesBypass("Example.COM", ["example.com"])).toBe(true);
    expect(matchesBypass("www.example.com", ["example.com"])).toBe(false);
    expect(matchesBypass("a.b.example.com", ["*.example.com"])).toBe(true);
    expect(matchesBypass("example.com", ["*.example.com"])).toBe(false);
    expect(matchesBypass("badexample.com", ["*.example.com"])).toBe(false);
  });
});
