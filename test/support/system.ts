import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import { newId } from "../../packages/gateway/src/store/ids.ts";
import { openStore, type Store, sqlitePathIn } from "../../packages/gateway/src/store/store.ts";
import { createDatabase } from "./postgres.ts";
import { type AgentProcess, type GatewayProcess, startAgent, startGatewayProcess } from "./processes.ts";

export type StoreKind = "sqlite" | "postgres";

export interface System {
  gateway: GatewayProcess;
  agent: AgentProcess;
  /** The same store the gateway uses, opened in the test process for setup and inspection. */
  store: Store;
  /** Environment that points a gateway (or the CLI) at this system's store. */
  storeEnv: NodeJS.ProcessEnv;
  organizationId: string;
  apiKey: string;
  /** An active session of organizationId bound to `agent`. */
  session: { id: string; name: string };
  /** fetch against the gateway with this system's API key unless headers say otherwise. */
  api(path: string, init?: RequestInit): Promise<Response>;
  newSession(organizationId: string, name: string, hostAddress: string): Promise<{ id: string; name: string }>;
  stop(): Promise<void>;
}

export interface SystemOptions {
  store: StoreKind;
  /** Admin URL of the run's PostgreSQL server; required for store "postgres". */
  postgresUrl?: string;
  agentEnv?: NodeJS.ProcessEnv;
  gatewayEnv?: NodeJS.ProcessEnv;
}

/** Host agent and gateway as separate OS processes, on a fresh store, with one organization, key and session. */
export async function startSystem(options: SystemOptions): Promise<System> {
  const dataDir = mkdtempSync(join(tmpdir(), "gateway-test-"));
  let storeEnv: NodeJS.ProcessEnv;
  if (options.store === "postgres") {
    if (!options.postgresUrl) throw new Error("startSystem: postgresUrl is required for the postgres store");
    storeEnv = { DATABASE_URL: await createDatabase(options.postgresUrl) };
  } else {
    storeEnv = { DATA_DIR: dataDir };
  }
  const store = await openStore(
    storeEnv.DATABASE_URL ? { databaseUrl: storeEnv.DATABASE_URL } : { sqlitePath: sqlitePathIn(dataDir) },
  );
  const agent = await startAgent(options.agentEnv);
  const gateway = await startGatewayProcess({ ...storeEnv, ...options.gatewayEnv });
  const organizationId = `org-${newId(8)}`;
  const { key: apiKey } = await createApiKey(store, organizationId, "test");

  const newSession = async (org: string, name: string, hostAddress: string) => {
    await store.organizations.ensure(org);
    const id = newId();
    await store.browserSessions.insert({
      id,
      organizationId: org,
      name,
      hostAddress,
      createdAt: new Date().toISOString(),
    });
    return { id, name };
  };
  const session = await newSession(organizationId, "local", agent.address);

  return {
    gateway,
    agent,
    store,
    storeEnv,
    organizationId,
    apiKey,
    session,
    api: (path, init = {}) => {
      const headers = new Headers(init.headers);
      if (!headers.has("authorization")) headers.set("authorization", `Bearer ${apiKey}`);
      return fetch(`${gateway.url}${path}`, { ...init, headers });
    },
    newSession,
    stop: async () => {
      await Promise.allSettled([gateway.stop(), agent.stop()]);
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
