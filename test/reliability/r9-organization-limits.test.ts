import { randomBytes } from "node:crypto";
import net from "node:net";
import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import { newId } from "../../packages/gateway/src/store/ids.ts";
import { openStore, type Store } from "../../packages/gateway/src/store/store.ts";
import { expectError, expectProxy, json } from "../../packages/gateway/test/proxies/http-expect.ts";
import { type AgentProcess, type GatewayProcess, startAgent, startGatewayProcess } from "../support/processes.ts";
import { freshStoreLocation, type StoreKind } from "../support/stores.ts";
import { type System, startSystem } from "../support/system.ts";

/**
 * R9: one organization cannot take what every organization shares. With MAX_SESSIONS_PER_ORG it holds at most
 * that many hosts, however many creates it sends at once through however many replicas; its proxy checks, each
 * of which may hold a socket for 10 s, are bounded in number at once and per minute, and a refused check
 * connects nowhere.
 */

const MAX_SESSIONS = 2;
const HOSTS = 9;

function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}

describe.each<StoreKind>(["sqlite", "postgres"])("R9 active sessions per organization on %s", (kind) => {
  let store: Store;
  let cleanup: () => void = () => {};
  let agents: AgentProcess[] = [];
  let gateways: GatewayProcess[] = [];

  beforeAll(async () => {
    const fresh = await freshStoreLocation(kind);
    cleanup = fresh.cleanup;
    agents = await Promise.all(Array.from({ length: HOSTS }, () => startAgent()));
    const storeEnv =
      "databaseUrl" in fresh.location
        ? { DATABASE_URL: fresh.location.databaseUrl, SECRETS_KEY: randomBytes(32).toString("hex") }
        : { DATA_DIR: dirname(fresh.location.sqlitePath) };
    const env = {
      ...storeEnv,
      HOST_AGENTS: agents.map((agent) => agent.address).join(","),
      MAX_SESSIONS_PER_ORG: String(MAX_SESSIONS),
    };
    // PostgreSQL serves several replicas; a SQLite file serves one gateway.
    gateways = await Promise.all(Array.from({ length: kind === "postgres" ? 2 : 1 }, () => startGatewayProcess(env)));
    store = await openStore(fresh.location);
  });

  afterAll(async () => {
    await Promise.allSettled([...gateways, ...agents].map((p) => p.stop()));
    await store?.close();
    cleanup();
  });

  async function keyOfNewOrganization(): Promise<string> {
    return (await createApiKey(store, `org-${newId(8)}`, "r9")).key;
  }

  function create(key: string, replica = 0): Promise<Response> {
    return fetch(`${gateways[replica % gateways.length]?.url}/browsers`, {
      method: "POST",
      headers: { ...bearer(key), "content-type": "application/json" },
      body: JSON.stringify({ timeout_seconds: 600 }),
    });
  }

  async function sessionId(res: Response): Promise<string> {
    expect(res.status, await res.clone().text()).toBe(200);
    return ((await res.json()) as { session_id: string }).session_id;
  }

  it(`refuses a session beyond ${MAX_SESSIONS} with 429 too_many_requests naming the limit, not to be retried; another organization still gets a host`, async () => {
    const key = await keyOfNewOrganization();
    for (let i = 0; i < MAX_SESSIONS; i++) await sessionId(await create(key));
    const refused = await create(key);
    const body = await expectError(refused, 429, "too_many_requests");
    expect(body.message).toContain(`${MAX_SESSIONS} active browser sessions`);
    expect(refused.headers.get("x-should-retry")).toBe("false");
    const other = await keyOfNewOrganization();
    await sessionId(await create(other));
  });

  it("makes room for a new session once one of the organization's sessions has ended", async () => {
    const key = await keyOfNewOrganization();
    const ids = [];
    for (let i = 0; i < MAX_SESSIONS; i++) ids.push(await sessionId(await create(key)));
    expect((await create(key)).status).toBe(429);
    const deleted = await fetch(`${gateways[0]?.url}/browsers/${ids[0]}`, { method: "DELETE", headers: bearer(key) });
    expect(deleted.status).toBe(204);
    await sessionId(await create(key));
  });

  it(`lets exactly ${MAX_SESSIONS} of 20 concurrent creates through every replica succeed while more hosts are idle`, async () => {
    const key = await keyOfNewOrganization();
    const idleBefore = (await store.hosts.list()).filter((h) => h.sessionId === null && h.stoppingSessionId === null);
    expect(idleBefore.length).toBeGreaterThan(MAX_SESSIONS);
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => create(key, i)));
    expect(responses.filter((res) => res.status === 200)).toHaveLength(MAX_SESSIONS);
    const refused = responses.filter((res) => res.status !== 200);
    expect(refused.map((res) => res.status)).toEqual(Array(20 - MAX_SESSIONS).fill(429));
    const listed = await fetch(`${gateways[0]?.url}/browsers`, { headers: bearer(key) });
    expect(((await listed.json()) as unknown[]).length).toBe(MAX_SESSIONS);
  });
});

/** A loopback TCP server that counts the connections it accepted; `silent` ones are held and never answered. */
async function countingServer(behaviour: "silent" | "closing"): Promise<{
  port: number;
  connections(): number;
  close(): Promise<void>;
}> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted++;
    socket.on("error", () => {});
    if (behaviour === "closing") {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => accepted,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

interface Tenant {
  key: string;
  proxyId: string;
}

describe("R9 proxy checks per organization", () => {
  const CONCURRENT = 2;
  const PER_MINUTE = 5;
  let system: System;
  let silent: Awaited<ReturnType<typeof countingServer>>;
  let closing: Awaited<ReturnType<typeof countingServer>>;

  beforeAll(async () => {
    [silent, closing] = await Promise.all([countingServer("silent"), countingServer("closing")]);
    system = await startSystem({
      store: "sqlite",
      gatewayEnv: {
        PROXY_CHECKS_CONCURRENT_PER_ORG: String(CONCURRENT),
        PROXY_CHECKS_PER_MINUTE_PER_ORG: String(PER_MINUTE),
        // Never reached: every proxy here fails before it could fetch anything.
        PROXY_CHECK_URL: "http://127.0.0.1:9/ip",
        // The proxies here are loopback servers that count the checks' connections.
        PROXY_ALLOWED_NETWORKS: "127.0.0.0/8",
      },
    });
  });

  afterAll(async () => {
    await system?.stop();
    await Promise.all([silent?.close(), closing?.close()]);
  });

  /** A custom proxy at the port, of the organization the key belongs to. */
  async function proxyAt(key: string, port: number): Promise<Tenant> {
    const created = await system.api("/proxies", {
      ...json("POST", { type: "custom", config: { host: "127.0.0.1", port } }),
      headers: { ...bearer(key), "content-type": "application/json" },
    });
    return { key, proxyId: (await expectProxy(created)).id };
  }

  async function newOrganizationKey(): Promise<string> {
    return (await createApiKey(system.store, `org-${newId(8)}`, "r9")).key;
  }

  function check(tenant: Tenant): Promise<Response> {
    return system.api(`/proxies/${tenant.proxyId}/check`, { method: "POST", headers: bearer(tenant.key) });
  }

  async function until(condition: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 5_000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it(`refuses a check beyond ${CONCURRENT} running at once with 429 and Retry-After, connecting nowhere; others and later checks run`, async () => {
    const tenant = await proxyAt(await newOrganizationKey(), silent.port);
    const before = silent.connections();
    const running = Array.from({ length: CONCURRENT }, () => check(tenant));
    await until(() => silent.connections() === before + CONCURRENT, "the running checks to connect");

    const refused = await check(tenant);
    const body = await expectError(refused, 429, "too_many_requests");
    expect(body.message).toContain(`${CONCURRENT} proxy checks`);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(10);
    expect(refused.headers.get("x-should-retry")).toBe("true");
    expect(silent.connections()).toBe(before + CONCURRENT);

    // Another organization's checks are not held back by this one's.
    const other = await proxyAt(await newOrganizationKey(), closing.port);
    expect((await expectProxy(await check(other))).status).toBe("unavailable");

    // The running checks end at their 10 s timeout; then the organization may check again.
    for (const res of await Promise.all(running)) expect((await expectProxy(res)).status).toBe("unavailable");
    const later = await proxyAt(tenant.key, closing.port);
    expect((await expectProxy(await check(later))).status).toBe("unavailable");
  }, 30_000);

  it(`refuses a check beyond ${PER_MINUTE} started within a minute with 429 and Retry-After, connecting nowhere`, async () => {
    const tenant = await proxyAt(await newOrganizationKey(), closing.port);
    for (let i = 0; i < PER_MINUTE; i++) expect((await expectProxy(await check(tenant))).status).toBe("unavailable");
    const before = closing.connections();
    const refused = await check(tenant);
    const body = await expectError(refused, 429, "too_many_requests");
    expect(body.message).toContain(`${PER_MINUTE} proxy checks`);
    expect(body.message).toContain("per minute");
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(50);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(closing.connections()).toBe(before);
  });
});
