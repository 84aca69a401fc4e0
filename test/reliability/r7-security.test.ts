import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { credentials, Client as GrpcClient } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createPromiseClient, HostAgent, RpcError } from "../../packages/contract/src/index.ts";
import { createApiKey, hashApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import { TEST_TLS } from "../../packages/gateway/test/proxies/loopback-proxy.ts";
import { filesUnder } from "../support/files.ts";
import { freePort } from "../support/ports.ts";
import {
  type AgentProcess,
  type GatewayProcess,
  runCli,
  startAgent,
  startGatewayProcess,
} from "../support/processes.ts";
import { rawRequest } from "../support/raw-http.ts";
import { type StoreKind, type System, startSystem } from "../support/system.ts";

/**
 * R7: what an attacker with a database dump, a log file, another organization's key, a revoked key, a huge or
 * a slow request, or no client certificate can get: nothing.
 */

const figures: Record<string, unknown> = {};

afterAll(() => {
  console.info(`R7 figures: ${JSON.stringify(figures)}`);
});

/** Every row of every table of the store, as JSON text. */
async function everyRow(system: System): Promise<string> {
  const tables =
    system.store.sql.dialect === "postgres"
      ? await system.store.sql.query<{ name: string }>(
          "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'",
        )
      : await system.store.sql.query<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'");
  const dump: Record<string, unknown[]> = {};
  for (const { name } of tables) dump[name] = await system.store.sql.query(`SELECT * FROM "${name}"`);
  return JSON.stringify(dump);
}

/** The store's files: the SQLite database and its journal, or PostgreSQL's data directory after a checkpoint. */
async function storeFiles(system: System): Promise<{ path: string; text: string }[]> {
  if (system.store.sql.dialect === "sqlite") return filesUnder(system.storeEnv.DATA_DIR as string);
  // Flushes the write-ahead log and every dirty page, so whatever was written is on disk now.
  await system.store.sql.execute("CHECKPOINT");
  const [row] = await system.store.sql.query<{ data_directory: string }>("SHOW data_directory");
  return filesUnder(row?.data_directory as string);
}

function json(method: string, body?: unknown): RequestInit {
  return {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  };
}

describe.each<StoreKind>(["sqlite", "postgres"])("R7 secrets at rest and in logs on %s", (kind) => {
  const PASSWORD = `R7-pa55-${randomBytes(6).toString("hex")}`;
  // The base64 lines of the CA certificate: any of them in the store or a log is the bundle in clear.
  const CA_LINES = TEST_TLS.ca.split("\n").filter((line) => line.length >= 40 && !line.startsWith("-----"));
  let system: System;
  let cliKey: string;

  const secretsIn = (text: string) => [
    ...(text.includes(PASSWORD) ? ["the proxy password"] : []),
    ...CA_LINES.filter((line) => text.includes(line)).map(() => "a line of the CA bundle"),
  ];

  beforeAll(async () => {
    system = await startSystem({
      store: kind,
      postgresUrl: inject("postgresUrl"),
      // Nothing listens at the check target: the check fails, and its failure is logged.
      // The proxy is on loopback, allowed so that the check gets as far as connecting and fails there.
      gatewayEnv: {
        LOG_LEVEL: "trace",
        PROXY_CHECK_URL: `http://127.0.0.1:${await freePort()}/ip`,
        PROXY_ALLOWED_NETWORKS: "127.0.0.0/8",
      },
    });
    cliKey = (JSON.parse(await runCli(["keys", "create", "--org", "org-r7-cli"], system.storeEnv)) as { key: string })
      .key;
    const config = {
      host: "127.0.0.1",
      port: await freePort(),
      username: "r7",
      password: PASSWORD,
      ca_bundle: TEST_TLS.ca,
    };
    const created = await system.api("/proxies", json("POST", { type: "custom", protocol: "https", config }));
    expect(created.status).toBe(200);
    const { id } = (await created.json()) as { id: string };
    // A check that fails (nothing listens at the proxy's port), with and without a target.
    expect((await system.api(`/proxies/${id}/check`, json("POST"))).status).toBe(200);
    expect((await system.api(`/proxies/${id}/check`, json("POST", { url: "http://127.0.0.1:1/" }))).status).toBe(200);
    // Refused requests that carry the secrets: a validation failure, a body that is not JSON, the wrong type.
    expect(
      (await system.api("/proxies", json("POST", { type: "custom", config: { ...config, port: 0 } }))).status,
    ).toBe(400);
    const broken = await system.api("/proxies", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"type":"custom","config":{"password":"${PASSWORD}" "ca_bundle":${JSON.stringify(TEST_TLS.ca)}}`,
    });
    expect(broken.status).toBe(400);
    const wrongType = await system.api("/proxies", {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: JSON.stringify({ type: "custom", config }),
    });
    expect(wrongType.status).toBe(400);
    // The key in a cookie too, where a careless log would show it.
    await system.api("/proxies", { headers: { cookie: `key=${system.apiKey}` } });
    // Log lines arrive after the answers: wait for the line of one last request.
    await system.api("/healthz?r7=last");
    await system.gateway.waitForLog((line) =>
      String((line.req as { url?: string } | undefined)?.url).includes("r7=last"),
    );
  });

  afterAll(async () => {
    await system?.stop();
  });

  it("stores API keys only as SHA-256 hashes", async () => {
    const rows = await everyRow(system);
    for (const key of [system.apiKey, cliKey]) {
      expect(rows).not.toContain(key);
      expect(rows).toContain(hashApiKey(key));
    }
    const files = await storeFiles(system);
    expect(files.length).toBeGreaterThan(0);
    const leaks = files.filter((file) => file.text.includes(system.apiKey) || file.text.includes(cliKey));
    expect(leaks.map((file) => file.path)).toEqual([]);
    figures[`${kind}StoreFilesSearched`] = files.length;
  });

  it("keeps neither the proxy password nor the CA bundle in clear in any row or file of the store", async () => {
    expect(secretsIn(await everyRow(system))).toEqual([]);
    const leaks = (await storeFiles(system)).flatMap((file) =>
      secretsIn(file.text).map((what) => `${what} in ${file.path}`),
    );
    expect(leaks).toEqual([]);
  });

  it("writes no API key, proxy password or CA bundle to the gateway's log, even at LOG_LEVEL=trace", async () => {
    const lines = await system.gateway.settledLines();
    const log = lines.join("\n");
    figures[`${kind}LogLines`] = lines.length;
    expect(lines.length).toBeGreaterThan(8);
    expect(secretsIn(log)).toEqual([]);
    expect(log).not.toContain(system.apiKey);
    expect(log).not.toContain(cliKey);
  });
});

describe("R7 revoked key on two replicas", () => {
  let system: System;
  let second: GatewayProcess;

  beforeAll(async () => {
    system = await startSystem({ store: "postgres", postgresUrl: inject("postgresUrl") });
    second = await startGatewayProcess(system.storeEnv);
  });

  afterAll(async () => {
    await second?.stop();
    await system?.stop();
  });

  it("refuses a key revoked through the CLI on every replica at the very next request", async () => {
    const created = JSON.parse(await runCli(["keys", "create", "--org", system.organizationId], system.storeEnv)) as {
      id: string;
      key: string;
    };
    const call = (url: string) => fetch(`${url}/proxies`, { headers: { authorization: `Bearer ${created.key}` } });
    const replicas = [system.gateway.url, second.url];
    // Twice each: the second answer comes from the replica's key cache, which the revocation must empty.
    for (const url of replicas) {
      expect((await call(url)).status).toBe(200);
      expect((await call(url)).status).toBe(200);
    }
    await runCli(["keys", "revoke", created.id], system.storeEnv);
    const revokedAt = performance.now();
    for (const url of replicas) {
      const res = await call(url);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: "unauthorized" });
    }
    figures.revokedRefusedWithinMs = Math.round(performance.now() - revokedAt);
  });
});

describe("R7 organizations cannot see each other", () => {
  let system: System;
  let keyB: string;
  let proxyA: { id: string; name: string };

  beforeAll(async () => {
    system = await startSystem({ store: "sqlite" });
    ({ key: keyB } = await createApiKey(system.store, "org-r7-b", "b"));
    const res = await system.api("/proxies", json("POST", { type: "datacenter", name: "a-proxy" }));
    proxyA = (await res.json()) as { id: string; name: string };
  });

  afterAll(async () => {
    await system?.stop();
  });

  const asB = (path: string, init: RequestInit = {}) =>
    system.api(path, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${keyB}` },
    });

  it("answers 404 not_found to organization B for every operation on organization A's proxy and session", async () => {
    const session = system.session;
    const cases: [string, string, RequestInit?][] = [
      ["get proxy", `/proxies/${proxyA.id}`],
      ["rename proxy", `/proxies/${proxyA.id}`, json("PATCH", { name: "stolen" })],
      ["check proxy", `/proxies/${proxyA.id}/check`, json("POST")],
      ["delete proxy", `/proxies/${proxyA.id}`, { method: "DELETE" }],
      ["get session by id", `/browsers/${session.id}`],
      ["get session by name", `/browsers/${session.name}`],
      ["get session including deleted", `/browsers/${session.id}?include_deleted=true`],
      ["press_key", `/browsers/${session.id}/computer/press_key`, json("POST", { keys: ["a"] })],
      ["press_key by name", `/browsers/${session.name}/computer/press_key`, json("POST", { keys: ["a"] })],
      ["file_info", `/browsers/${session.id}/fs/file_info?path=/`],
      ["file_info by name", `/browsers/${session.name}/fs/file_info?path=/`],
      ["delete session", `/browsers/${session.id}`, { method: "DELETE" }],
      ["delete session by name", `/browsers/${session.name}`, { method: "DELETE" }],
    ];
    const answers: string[] = [];
    for (const [name, path, init] of cases) {
      const res = await asB(path, init);
      const body = (await res.json()) as { code?: string };
      answers.push(`${name}: ${res.status} ${body.code}`);
    }
    expect(answers).toEqual(cases.map(([name]) => `${name}: 404 not_found`));
    figures.crossOrganizationChecks = cases.length;
  });

  it("lists none of organization A's proxies or sessions to organization B", async () => {
    expect(await (await asB("/proxies")).json()).toEqual([]);
    expect(await (await asB("/browsers?status=all")).json()).toEqual([]);
  });

  it("leaves organization A's proxy and session as they were after B's attempts", async () => {
    const proxy = await system.api(`/proxies/${proxyA.id}`);
    expect(proxy.status).toBe(200);
    expect(((await proxy.json()) as { name: string }).name).toBe("a-proxy");
    const session = await system.api(`/browsers/${system.session.id}`);
    expect(session.status).toBe(200);
    expect(await session.json()).not.toHaveProperty("deleted_at");
  });
});

describe("R7 request size and slow clients", () => {
  // Proposed configuration (the gateway's timeouts are 10 s and 30 s, fixed in server.ts, otherwise).
  const HEADERS_TIMEOUT_MS = 1_000;
  const REQUEST_TIMEOUT_MS = 2_000;
  let system: System;

  beforeAll(async () => {
    system = await startSystem({
      store: "sqlite",
      gatewayEnv: {
        HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      },
    });
  });

  afterAll(async () => {
    await system?.stop();
  });

  it.each([
    ["POST", "/proxies"],
    ["PATCH", "/proxies/any"],
    ["POST", "/proxies/any/check"],
    ["POST", "/browsers"],
    ["POST", "/browsers/local/computer/press_key"],
  ])(
    "answers 413 payload_too_large to a body over 1 MiB on %s %s, with or without Content-Length",
    async (method, path) => {
      const body = JSON.stringify({ name: "x".repeat(1024 * 1024) });
      const auth: [string, string] = ["Authorization", `Bearer ${system.apiKey}`];
      const type: [string, string] = ["Content-Type", "application/json"];
      for (const headers of [
        [auth, type],
        [auth, type, ["Transfer-Encoding", "chunked"] as [string, string]],
      ]) {
        const res = await rawRequest(system.gateway.url, { method, path, headers, body });
        expect(res.status).toBe(413);
        expect(JSON.parse(res.body)).toMatchObject({ code: "payload_too_large" });
      }
    },
  );

  /** Opens a connection, sends `head` then `drip` one byte every `gapMs`, and says when the gateway hung up. */
  function dripFeed(
    head: string,
    drip: string,
    gapMs: number,
  ): Promise<{ closedAfterMs: number; sent: number; answer: string }> {
    return new Promise((resolve) => {
      const started = performance.now();
      const socket = net.connect(system.gateway.port, "127.0.0.1");
      let sent = 0;
      let answer = "";
      socket.write(head);
      const timer = setInterval(() => {
        if (sent < drip.length) socket.write(drip[sent++] as string);
      }, gapMs);
      socket.on("data", (chunk) => {
        answer += chunk.toString("latin1");
      });
      // Gives up after 12 s: a connection still open then was not cut off.
      const giveUp = setTimeout(() => socket.destroy(), 12_000);
      socket.on("error", () => undefined);
      socket.on("close", () => {
        clearInterval(timer);
        clearTimeout(giveUp);
        resolve({ closedAfterMs: performance.now() - started, sent, answer });
      });
    });
  }

  it(`cuts off a client that sends its headers too slowly, after the ${HEADERS_TIMEOUT_MS} ms headers timeout`, {
    timeout: 15_000,
  }, async () => {
    const head = "GET /proxies HTTP/1.1\r\nHost: x\r\n";
    const drip = `Authorization: Bearer ${system.apiKey}\r\nX-Slow: ${"a".repeat(200)}\r\n\r\n`;
    const { closedAfterMs, sent } = await dripFeed(head, drip, 100);
    figures.slowHeadersCutAfterMs = Math.round(closedAfterMs);
    expect(sent).toBeLessThan(drip.length);
    expect(closedAfterMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
    expect(closedAfterMs).toBeLessThan(HEADERS_TIMEOUT_MS + 2_000);
  });

  it(`cuts off a client that sends its body too slowly, after the ${REQUEST_TIMEOUT_MS} ms request timeout`, {
    timeout: 15_000,
  }, async () => {
    const body = JSON.stringify({ type: "datacenter", name: "slow".repeat(20) });
    const head = `POST /proxies HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${system.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const { closedAfterMs, sent } = await dripFeed(head, body, 100);
    figures.slowBodyCutAfterMs = Math.round(closedAfterMs);
    expect(sent).toBeLessThan(body.length);
    expect(closedAfterMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(closedAfterMs).toBeLessThan(REQUEST_TIMEOUT_MS + 2_000);
  });
});

describe("R7 mTLS at the host agent", () => {
  const DEV_CERTS = fileURLToPath(new URL("../../scripts/dev-certs.sh", import.meta.url));
  let dir: string;
  let certs: string;
  let stranger: string;
  let agent: AgentProcess;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "r7-mtls-"));
    certs = join(dir, "dev");
    stranger = join(dir, "stranger");
    execFileSync("bash", [DEV_CERTS, certs], { stdio: "pipe" });
    execFileSync("bash", [DEV_CERTS, stranger], { stdio: "pipe" });
    agent = await startAgent({
      AGENT_TLS_CERT: join(certs, "agent.crt"),
      AGENT_TLS_KEY: join(certs, "agent.key"),
      AGENT_TLS_CLIENT_CA: join(certs, "ca.crt"),
    });
  });

  afterAll(async () => {
    await agent?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Describe straight at the agent, as any caller on the network could try it. */
  async function callAgent(clientCredentials: ReturnType<typeof credentials.createInsecure>): Promise<string> {
    const channel = new GrpcClient(`localhost:${agent.port}`, clientCredentials);
    try {
      await createPromiseClient(HostAgent, channel).describe({}, { timeoutMs: 3_000 });
      return "OK";
    } catch (error) {
      return error instanceof RpcError ? `refused: ${error.code}` : String(error);
    } finally {
      channel.close();
    }
  }

  const read = (path: string) => readFileSync(path);

  it("serves a caller with a client certificate signed by its client CA", async () => {
    const ok = credentials.createSsl(
      read(join(certs, "ca.crt")),
      read(join(certs, "gateway.key")),
      read(join(certs, "gateway.crt")),
    );
    expect(await callAgent(ok)).toBe("OK");
  });

  it.each([
    ["no client certificate", () => credentials.createSsl(read(join(certs, "ca.crt")))],
    [
      "a client certificate from another CA",
      () =>
        credentials.createSsl(
          read(join(certs, "ca.crt")),
          read(join(stranger, "gateway.key")),
          read(join(stranger, "gateway.crt")),
        ),
    ],
    [
      "its own server certificate as a client certificate",
      () =>
        credentials.createSsl(
          read(join(certs, "ca.crt")),
          read(join(certs, "agent.key")),
          read(join(certs, "agent.crt")),
        ),
    ],
    ["plaintext", () => credentials.createInsecure()],
  ])("refuses a caller with %s", async (_case, make) => {
    const outcome = await callAgent(make());
    expect(outcome).toMatch(/^refused: /);
    expect(outcome).not.toBe("OK");
  });
});
