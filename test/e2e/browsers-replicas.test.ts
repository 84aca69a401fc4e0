import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import { openStore, type Store } from "../../packages/gateway/src/store/store.ts";
import { createDatabase } from "../support/postgres.ts";
import { type AgentProcess, type GatewayProcess, startAgent, startGatewayProcess } from "../support/processes.ts";

const HOSTS = 5;
const REQUESTS = 100;

let store: Store;
let agents: AgentProcess[] = [];
let gateways: GatewayProcess[] = [];
let apiKey: string;

beforeAll(async () => {
  const databaseUrl = await createDatabase(inject("postgresUrl"));
  agents = await Promise.all(Array.from({ length: HOSTS }, () => startAgent()));
  const env = {
    DATABASE_URL: databaseUrl,
    // Replicas on one database share the key that seals proxy secrets.
    SECRETS_KEY: randomBytes(32).toString("hex"),
    HOST_AGENTS: agents.map((a) => a.address).join(","),
  };
  // Both replicas migrate and register the same hosts at the same moment.
  gateways = await Promise.all([startGatewayProcess(env), startGatewayProcess(env)]);
  store = await openStore({ databaseUrl });
  ({ key: apiKey } = await createApiKey(store, "replicas", "test"));
});

afterAll(async () => {
  await Promise.allSettled([...gateways, ...agents].map((p) => p.stop()));
  await store?.close();
});

describe("two gateway replicas on one PostgreSQL", () => {
  it(`place ${REQUESTS} concurrent creates on ${HOSTS} hosts: ${HOSTS} succeed, each on its own host, the rest get 503`, async () => {
    const responses = await Promise.all(
      Array.from({ length: REQUESTS }, (_, i) =>
        fetch(`${gateways[i % 2]?.url}/browsers`, {
          method: "POST",
          headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ timeout_seconds: 600 }),
        }),
      ),
    );
    const ok = responses.filter((res) => res.status === 200);
    const refused = responses.filter((res) => res.status !== 200);
    expect(ok).toHaveLength(HOSTS);
    expect(refused.map((res) => res.status)).toEqual(Array(REQUESTS - HOSTS).fill(503));
    for (const res of refused) {
      expect(res.headers.get("x-should-retry")).toBe("true");
      expect(await res.json()).toMatchObject({ code: "no_host_available" });
    }

    const sessionIds = await Promise.all(
      ok.map(async (res) => ((await res.json()) as { session_id: string }).session_id),
    );
    const sessions = await Promise.all(sessionIds.map((id) => store.browserSessions.findActive("replicas", id)));
    expect(new Set(sessions.map((s) => s?.hostAddress)).size).toBe(HOSTS);
    const hosts = await store.hosts.list();
    expect(hosts.map((h) => h.address).sort()).toEqual(agents.map((a) => a.address).sort());
    expect(hosts.map((h) => h.sessionId).sort()).toEqual([...sessionIds].sort());
    for (const session of sessions) {
      expect(hosts.find((h) => h.address === session?.hostAddress)?.sessionId).toBe(session?.id);
    }
  });
});
