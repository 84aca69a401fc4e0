import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { HostPool } from "../../packages/gateway/src/hosts/host-pool.ts";
import { parseRawResponse, rawExchange, rawRequest } from "../support/raw-http.ts";
import { type StoreKind, type System, startSystem } from "../support/system.ts";

/**
 * R8: hostile input the first review missed, and what the logs keep of a request. A NUL character
 * anywhere gets the same 400 on SQLite and PostgreSQL; every method gets an Error body; a key a
 * client wrongly puts in a URL or a request id never reaches a log line, and a request id that
 * is not well formed is never carried as one.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function json(method: string, body?: unknown): RequestInit {
  return {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  };
}

type Line = Record<string, unknown>;
const reqOf = (line: Line) => (line.req ?? {}) as { id?: string; callerReqId?: string; url?: string };

/** The gateway's errors and fatal lines: a refused input is no error of the gateway's. */
async function errorLines(system: System): Promise<string[]> {
  return (await system.gateway.settledLines()).filter((line) => /"level":(50|60)/.test(line));
}

describe.each<StoreKind>(["sqlite", "postgres"])("R8 strings with a NUL character on %s", (kind) => {
  let system: System;
  let proxyId: string;

  beforeAll(async () => {
    system = await startSystem({ store: kind, postgresUrl: inject("postgresUrl") });
    const created = await system.api("/proxies", json("POST", { type: "datacenter", name: "r8" }));
    expect(created.status).toBe(200);
    proxyId = ((await created.json()) as { id: string }).id;
  });

  afterAll(async () => {
    await system?.stop();
  });

  it("refuses a NUL in a path id, a list filter, a proxy or session name, proxy_id and tags with 400 bad_request", async () => {
    const custom = { host: "127.0.0.1", port: 3128 };
    const cases: [string, string, RequestInit?][] = [
      ["proxy id", "/proxies/a%00b"],
      ["proxy id on rename", "/proxies/a%00b", json("PATCH", { name: "x" })],
      ["proxy id on delete", "/proxies/a%00b", { method: "DELETE" }],
      ["proxy id on check", "/proxies/a%00b/check", json("POST")],
      ["session id or name", "/browsers/a%00b"],
      ["session id or name on delete", "/browsers/a%00b", { method: "DELETE" }],
      ["session id or name on press_key", "/browsers/a%00b/computer/press_key", json("POST", { keys: ["a"] })],
      ["session id or name on file_info", "/browsers/a%00b/fs/file_info?path=/"],
      ["proxy list name filter", "/proxies?name=a%00b"],
      ["proxy list query filter", "/proxies?query=a%00b"],
      ["proxy name on create", "/proxies", json("POST", { type: "datacenter", name: "a\u0000b" })],
      ["proxy name on rename", `/proxies/${proxyId}`, json("PATCH", { name: "a\u0000b" })],
      [
        "custom proxy username",
        "/proxies",
        json("POST", { type: "custom", config: { ...custom, username: "a\u0000" } }),
      ],
      [
        "custom proxy password",
        "/proxies",
        json("POST", { type: "custom", config: { ...custom, password: "pass\u0000word" } }),
      ],
      ["session name", "/browsers", json("POST", { name: "a\u0000b" })],
      ["proxy_id", "/browsers", json("POST", { proxy_id: "a\u0000b" })],
      ["tag value", "/browsers", json("POST", { tags: { team: "a\u0000b" } })],
      ["tag key", "/browsers", json("POST", { tags: { "a\u0000b": "x" } })],
    ];
    const wrong: string[] = [];
    for (const [what, path, init] of cases) {
      const res = await system.api(path, init);
      const body = (await res.json()) as { code?: string; details?: { code: string; message: string }[] };
      const detail = body.details?.[0];
      if (
        res.status !== 400 ||
        body.code !== "bad_request" ||
        detail?.code !== "invalid_input" ||
        !detail.message.endsWith("must not contain a NUL character")
      ) {
        wrong.push(`${what}: ${res.status} ${JSON.stringify(body)}`);
      }
    }
    expect(wrong).toEqual([]);
    // Nothing was written: the proxy keeps its name, no session or proxy was made.
    expect(await (await system.api(`/proxies/${proxyId}`)).json()).toMatchObject({ name: "r8" });
    expect(await (await system.api("/proxies")).json()).toHaveLength(1);
    expect(await (await system.api("/browsers")).json()).toHaveLength(1);
  });

  it("logs none of them as an error", async () => {
    expect((await errorLines(system)).slice(0, 3)).toEqual([]);
  });
});

describe("R8 methods no route serves", () => {
  let system: System;

  beforeAll(async () => {
    system = await startSystem({ store: "sqlite" });
  });

  afterAll(async () => {
    await system?.stop();
  });

  it("answers CONNECT with 405 method_not_allowed and the Error body, then closes the connection", async () => {
    for (const target of ["127.0.0.1:443", `127.0.0.1:${system.gateway.port}`, "/proxies"]) {
      const { text, closed } = await rawExchange(
        system.gateway.port,
        `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\nAuthorization: Bearer ${system.apiKey}\r\n\r\n`,
      );
      expect(closed).toBe(true);
      const response = parseRawResponse(text);
      expect(response.status).toBe(405);
      expect(response.headers["x-should-retry"]).toBe("false");
      expect(response.headers.allow).toBe("GET, HEAD, POST, PUT, PATCH, DELETE");
      expect(JSON.parse(response.body)).toEqual({ code: "method_not_allowed", message: expect.any(String) });
    }
  });

  it("answers a method a served path does not take with 405 and the methods it does take", async () => {
    // No body: node:http would send PUT with an empty chunked one, which must be JSON to be read at all.
    const headers: [string, string][] = [
      ["Authorization", `Bearer ${system.apiKey}`],
      ["Content-Length", "0"],
    ];
    const cases: [string, string, string][] = [
      ["PUT", "/proxies", "GET, HEAD, POST"],
      ["PROPFIND", "/browsers/some-session", "GET, HEAD, DELETE"],
      ["TRACE", "/healthz", "GET, HEAD"],
      ["GET", "/browsers/some-session/computer/press_key", "POST"],
      ["QUERY", "/proxies/some-proxy/check/", "POST"],
    ];
    for (const [method, path, allow] of cases) {
      const res = await rawRequest(system.gateway.url, { method, path, headers });
      expect({ method, path, status: res.status, allow: res.headers.allow }).toEqual({
        method,
        path,
        status: 405,
        allow,
      });
      expect(JSON.parse(res.body)).toEqual({ code: "method_not_allowed", message: expect.any(String) });
    }
    const unknown = await rawRequest(system.gateway.url, { method: "PUT", path: "/nothing-here", headers });
    expect(unknown.status).toBe(404);
  });
});

describe("R8 what the logs keep of a request", () => {
  let system: System;
  let hosts: HostPool;

  beforeAll(async () => {
    system = await startSystem({ store: "sqlite" });
    hosts = new HostPool(undefined);
  });

  afterAll(async () => {
    hosts?.close();
    await system?.stop();
  });

  it("logs query values of secret names, and anything shaped like an API key, as [redacted]", async () => {
    const secrets = ["tok-r8-1", "api-r8-2", "pw-r8-3", "cs-r8-4", "auth-r8-5", system.apiKey];
    const query =
      `limit=5&token=${secrets[0]}&api_key=${secrets[1]}&password=${secrets[2]}&client_secret=${secrets[3]}` +
      `&Authorization=Bearer%20${secrets[4]}&pasted=${system.apiKey}&name=r8-kept`;
    expect((await system.api(`/proxies?${query}`)).status).toBe(400);
    expect((await system.api(`/browsers/${system.apiKey}/fs/file_info?path=/&key`)).status).toBe(404);
    const listed = await system.gateway.waitForLog((line) => String(reqOf(line).url).startsWith("/proxies?limit=5"));
    expect(reqOf(listed).url).toBe(
      "/proxies?limit=5&token=[redacted]&api_key=[redacted]&password=[redacted]&client_secret=[redacted]" +
        "&Authorization=[redacted]&pasted=[redacted]&name=r8-kept",
    );
    const pathKey = await system.gateway.waitForLog((line) => String(reqOf(line).url).includes("/fs/file_info"));
    expect(reqOf(pathKey).url).toBe("/browsers/[redacted]/fs/file_info?path=/&key");
    const log = (await system.gateway.settledLines()).join("\n");
    expect(secrets.filter((secret) => log.includes(secret))).toEqual([]);
  });

  it("keeps a well-formed caller request id: echoed, logged and carried to the host agent", async () => {
    const id = `r8-trace.${Date.now()}:01`;
    const res = await system.api(`/browsers/${system.session.id}/fs/file_info?path=/`, {
      headers: { "x-request-id": id },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toBe(id);
    const line = await system.gateway.waitForLog((l) => reqOf(l).id === id);
    expect(reqOf(line).callerReqId).toBeUndefined();
    const agentLine = await system.agent.waitForLog((l) => l.reqId === id && l.method === "FileInfo");
    expect(agentLine.callerReqId).toBeUndefined();
  });

  it("replaces any other caller request id with a generated one, logging the caller's beside it", async () => {
    const long = `r8-long-${"x".repeat(200)}`;
    const cases: [sent: string, logged: string][] = [
      ["r8 has spaces", "r8 has spaces"],
      ['r8"},"level":60,"msg":"forged', 'r8"},"level":60,"msg":"forged'],
      ["r8_under_score", "r8_under_score"],
      [`r8-${"a".repeat(62)}`, `r8-${"a".repeat(62)}`],
      [long, long.slice(0, 128)],
      [system.apiKey, "[redacted]"],
    ];
    for (const [sent, logged] of cases) {
      const res = await system.api(`/browsers/${system.session.id}/fs/file_info?path=/`, {
        headers: { "x-request-id": sent },
      });
      expect(res.status).toBe(200);
      const given = res.headers.get("x-request-id") ?? "";
      expect(given).toMatch(UUID);
      const line = await system.gateway.waitForLog((l) => reqOf(l).id === given);
      expect(reqOf(line).callerReqId).toBe(logged);
      await system.agent.waitForLog((l) => l.reqId === given && l.method === "FileInfo");
    }
    const agentLog = (await system.agent.settledLines()).join("\n");
    expect(cases.filter(([sent]) => agentLog.includes(JSON.stringify(sent).slice(1, -1)))).toEqual([]);
    expect((await system.gateway.settledLines()).join("\n")).not.toContain(system.apiKey);
  });

  it("applies the same rule to the request id the host agent receives in gRPC metadata", async () => {
    const agent = hosts.client(system.agent.address);
    const good = `r8-grpc-${Date.now()}`;
    await agent.describe({}, { timeoutMs: 5_000, requestId: good });
    const kept = await system.agent.waitForLog((l) => l.reqId === good && l.method === "Describe");
    expect(kept.callerReqId).toBeUndefined();
    const bad = `r8 grpc ${"y".repeat(300)}`;
    await agent.describe({}, { timeoutMs: 5_000, requestId: bad });
    const refused = await system.agent.waitForLog((l) => l.callerReqId === bad.slice(0, 128));
    expect(refused.method).toBe("Describe");
    expect(refused.reqId).toMatch(UUID);
  });

  it("logs only the path of a refused CDP upgrade, under the same request id rule", async () => {
    const token = `r8-cdp-token-${Date.now()}`;
    const { text } = await rawExchange(
      system.gateway.port,
      `GET /browsers/${system.session.id}/cdp?token=${token} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n` +
        "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" +
        "X-Request-Id: r8 cdp id\r\n\r\n",
    );
    const response = parseRawResponse(text);
    expect(response.status).toBe(401);
    const given = response.headers["x-request-id"] ?? "";
    expect(given).toMatch(UUID);
    const line = await system.gateway.waitForLog((l) => l.reqId === given);
    expect(line).toMatchObject({ path: `/browsers/${system.session.id}/cdp`, callerReqId: "r8 cdp id", status: 401 });
    expect((await system.gateway.settledLines()).join("\n")).not.toContain(token);
  });

  it("logged no error", async () => {
    expect((await errorLines(system)).slice(0, 3)).toEqual([]);
  });
});
