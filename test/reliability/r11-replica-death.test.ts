import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SimulatedFleet } from "../../bench/lib/fleet.ts";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import { HOST_CHECKERS_GROUP, ownerOf } from "../../packages/gateway/src/hosts/check-share.ts";
import { openStore } from "../../packages/gateway/src/store/store.ts";
import { type GatewayProcess, startGatewayProcess } from "../support/processes.ts";
import { freshStoreLocation } from "../support/stores.ts";

/**
 * R11: three gateway replicas on one PostgreSQL database split the host checks of a simulated fleet
 * (bench/fleet-simulator.ts). One is killed while 100 sessions are being created across the three:
 * every create either succeeds on a host of its own or fails with a clean error, and the hosts the
 * dead replica was checking are checked by the others within the same few seconds.
 */

const HOSTS = 150;
const CREATES = 100;
const CHECK_INTERVAL_MS = 1_000;

let fleet: SimulatedFleet;
let gateways: GatewayProcess[] = [];
let databaseUrl: string;
let apiKey: string;

async function query<Row extends Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<Row>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** The keys of the replicas that hold their membership now (see PostgresMembership). */
async function members(): Promise<string[]> {
  const rows = await query<{ key: number }>(
    "SELECT objid::int AS key FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND classid = $1::int::oid",
    [HOST_CHECKERS_GROUP],
  );
  return rows.map((row) => String(row.key)).sort();
}

async function healthOf(): Promise<Map<string, string>> {
  const rows = await query<{ address: string; health: string }>("SELECT address, health FROM hosts");
  return new Map(rows.map((row) => [row.address, row.health]));
}

beforeAll(async () => {
  fleet = await SimulatedFleet.start(HOSTS, 50);
  const fresh = await freshStoreLocation("postgres");
  databaseUrl = (fresh.location as { databaseUrl: string }).databaseUrl;
  const store = await openStore({ databaseUrl });
  apiKey = (await createApiKey(store, "org-r11", "r11")).key;
  await store.close();
  const env = {
    DATABASE_URL: databaseUrl,
    SECRETS_KEY: randomBytes(32).toString("hex"),
    HOST_AGENTS: fleet.addresses.join(","),
    HOST_CHECK_INTERVAL_MS: String(CHECK_INTERVAL_MS),
  };
  gateways = await Promise.all([1, 2, 3].map(() => startGatewayProcess(env)));
  for (;;) {
    const healths = await healthOf();
    if ([...healths.values()].every((health) => health === "serving") && (await members()).length === 3) break;
    await sleep(200);
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(gateways.map((gateway) => gateway.stop("SIGKILL")));
  await fleet?.stop();
});

describe("R11 a gateway replica dies while sessions are being created across three", () => {
  it("every create succeeds on a host of its own or fails cleanly, and its hosts are checked again", async () => {
    const before = await members();
    const victim = gateways[1] as GatewayProcess;
    const outcomes: { status: number | "connection lost"; body?: { session_id?: string; code?: string } }[] = [];
    let next = 0;
    const worker = async () => {
      while (next < CREATES) {
        const gateway = gateways[next++ % gateways.length] as GatewayProcess;
        try {
          const response = await fetch(`${gateway.url}/browsers`, {
            method: "POST",
            headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
            body: "{}",
          });
          outcomes.push({
            status: response.status,
            body: (await response.json()) as { session_id?: string; code?: string },
          });
        } catch {
          outcomes.push({ status: "connection lost" });
        }
      }
    };
    const creating = Promise.all(Array.from({ length: 20 }, worker));
    await sleep(150);
    await victim.stop("SIGKILL");
    await creating;

    expect(outcomes).toHaveLength(CREATES);
    const created = outcomes.filter((outcome) => outcome.status === 200);
    expect(created.length).toBeGreaterThan(CREATES / 2);
    for (const outcome of outcomes) {
      if (outcome.status === 200 || outcome.status === "connection lost") continue;
      // A clean refusal: the Error body of a 5xx the official client can retry.
      expect(outcome.status).toBeGreaterThanOrEqual(500);
      expect(outcome.body?.code).toEqual(expect.any(String));
    }
    const stats = await fleet.stats();
    expect(stats.doubleStarts).toBe(0);
    const [{ sessions, hosts }] = (await query<{ sessions: string; hosts: string }>(
      "SELECT count(*) AS sessions, count(DISTINCT host_address) AS hosts FROM browser_sessions WHERE deleted_at IS NULL",
    )) as [{ sessions: string; hosts: string }];
    expect(Number(hosts)).toBe(Number(sessions));

    // The dead replica's membership went with its connection: two members are left.
    let after = await members();
    for (let tries = 0; after.length !== 2 && tries < 50; tries++) {
      await sleep(100);
      after = await members();
    }
    expect(after).toHaveLength(2);
    const [gone] = before.filter((key) => !after.includes(key));
    // Hosts that were the dead replica's to check, idle ones, die now: the survivors must notice.
    const healths = await healthOf();
    const busy = new Set(
      (await query<{ address: string }>("SELECT address FROM hosts WHERE session_id IS NOT NULL")).map(
        (r) => r.address,
      ),
    );
    const idleOrphans = fleet.addresses
      .filter(
        (address) => ownerOf(address, before) === gone && healths.get(address) === "serving" && !busy.has(address),
      )
      .slice(0, 5);
    expect(idleOrphans.length).toBeGreaterThan(0);
    for (const address of idleOrphans) await fleet.kill(address);
    // Out of the pool as any dead host is, after a check interval or two; never is the failure.
    const deadline = performance.now() + 15 * CHECK_INTERVAL_MS;
    let left = idleOrphans;
    while (left.length > 0 && performance.now() < deadline) {
      await sleep(100);
      const now = await healthOf();
      left = left.filter((address) => now.get(address) === "serving");
    }
    expect(left).toEqual([]);
  }, 60_000);
});
