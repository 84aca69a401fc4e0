import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import { HostPool, type HostTls } from "../../packages/gateway/src/hosts/host-pool.ts";
import { newId } from "../../packages/gateway/src/store/ids.ts";
import { openStore, type Store, sqlitePathIn } from "../../packages/gateway/src/store/store.ts";
import { createDatabase } from "./postgres.ts";
import { type AgentProcess, type GatewayProcess, runCli, startAgent, startGatewayProcess } from "./processes.ts";

export type StoreKind = "sqlite" | "postgres";

// The gateway checks hosts every HOST_CHECK_INTERVAL_MS; startSystem makes that short.
const HOST_CHECK_INTERVAL_MS = "200";
const HOST_SERVING_TIMEOUT_MS = 10_000;

export interface System {
  gateway: GatewayProcess;
  agent: AgentProcess;
  /** The same store the gateway uses, opened in the test process for setup and inspection. */
  store: Store;
  /** Environment that points a gateway (or the CLI) at this system's store. */
  storeEnv: NodeJS.ProcessEnv;
  organizationId: string;
  apiKey: string;
  /** An active session of organizationId on `agent`, created through POST /browsers. */
  session: { id: string; name: string };
  /** fetch against the gateway with this system's API key unless headers say otherwise. */
  api(path: string, init?: RequestInit): Promise<Response>;
  /**
   * Binds a session to any address by hand, bypassing host allocation (for hosts that are down or
   * fake). With `start`, also starts it on that host's agent, as POST /browsers would (agents serve
   * only the session they run), over plaintext or the given TLS.
   */
  newSession(
    organizationId: string,
    name: string,
    hostAddress: string,
    start?: { tls?: HostTls },
  ): Promise<{ id: string; name: string }>;
  /** Registers another host agent with the admin CLI and waits until the gateway found it serving. */
  addHost(address: string): Promise<void>;
  stop(): Promise<void>;
}

export interface SystemOptions {
  store: StoreKind;
  /** Admin URL of the run's PostgreSQL server; required for store "postgres". */
  postgresUrl?: string;
  agentEnv?: NodeJS.ProcessEnv;
  gatewayEnv?: NodeJS.ProcessEnv;
}

/**
 * Host agent and gateway as separate OS processes, on a fresh store, with one organization, key and
 * session. The agent is the gateway's only host (HOST_AGENTS), so the session is on it.
 */
export async function startSystem(options: SystemOptions): Promise<System> {
  const dataDir = mkdtempSync(join(tmpdir(), "gateway-test-"));
  let storeEnv: NodeJS.ProcessEnv;
  if (options.store === "postgres") {
    if (!options.postgresUrl) throw new Error("startSystem: postgresUrl is required for the postgres store");
    // Replicas on one database share the key that seals proxy secrets.
    storeEnv = {
      DATABASE_URL: await createDatabase(options.postgresUrl),
      SECRETS_KEY: randomBytes(32).toString("hex"),
    };
  } else {
    storeEnv = { DATA_DIR: dataDir };
  }
  const store = await openStore(
    storeEnv.DATABASE_URL ? { databaseUrl: storeEnv.DATABASE_URL } : { sqlitePath: sqlitePathIn(dataDir) },
  );
  const agent = await startAgent(options.agentEnv);
  const gateway = await startGatewayProcess({
    ...storeEnv,
    HOST_AGENTS: agent.address,
    HOST_CHECK_INTERVAL_MS,
    ...options.gatewayEnv,
  });
  const organizationId = `org-${newId(8)}`;
  const { key: apiKey } = await createApiKey(store, organizationId, "test");

  const newSession = async (org: string, name: string, hostAddress: string, start?: { tls?: HostTls }) => {
    await store.organizations.ensure(org);
    const id = newId();
    await store.browserSessions.insert({
      id,
      organizationId: org,
      name,
      hostAddress,
      createdAt: new Date().toISOString(),
    });
    if (start) {
      const pool = new HostPool(start.tls);
      try {
        await pool.client(hostAddress).startSession({ sessionId: id }, { timeoutMs: 30_000 });
      } finally {
        pool.close();
      }
    }
    return { id, name };
  };
  const api = (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (!headers.has("authorization")) headers.set("authorization", `Bearer ${apiKey}`);
    return fetch(`${gateway.url}${path}`, { ...init, headers });
  };
  const created = await api("/browsers", {
    method: "POST",
    headers: { "content-type": "application/json" },
    // Long enough that no test file sees it idle out.
    body: JSON.stringify({ name: "local", timeout_seconds: 3600 }),
  });
  if (!created.ok) throw new Error(`startSystem: POST /browsers answered ${created.status}: ${await created.text()}`);
  const session = { id: ((await created.json()) as { session_id: string }).session_id, name: "local" };

  return {
    gateway,
    agent,
    store,
    storeEnv,
    organizationId,
    apiKey,
    session,
    api,
    newSession,
    addHost: async (address) => {
      await runCli(["hosts", "add", address], storeEnv);
      const deadline = Date.now() + HOST_SERVING_TIMEOUT_MS;
      while ((await store.hosts.find(address))?.health !== "serving") {
        if (Date.now() > deadline) throw new Error(`host ${address} did not become serving`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    stop: async () => {
      await Promise.allSettled([gateway.stop(), agent.stop()]);
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
