import { type BenchContext, type BenchOutcome, metric } from "./lib/bench.ts";
import { alternateThroughput } from "./lib/measure.ts";
import { createProxies, renameTarget } from "./lib/proxies.ts";

/**
 * B6: rename throughput with 1 and with 2 gateway replicas on one PostgreSQL. The load is the same
 * in both: two streams of half the connections each, both at replica 1, or one at each replica (a
 * client-side split stands in for a load balancer, so no proxy process takes CPU from either side).
 */
export async function b6Replicas(ctx: BenchContext): Promise<BenchOutcome> {
  const started = performance.now();
  const { env, settings, progress } = ctx;
  const half = Math.ceil(settings.connections / 2);
  const tenant = await env.tenant("postgres");
  const first = await env.gateway("gateway-postgres-1", "postgres");
  const second = await env.gateway("gateway-postgres-2", "postgres");
  const floorFirst = await env.postgresFloor(1);
  const floorSecond = await env.postgresFloor(2);
  progress("B6: creating proxies through the API");
  const ids = await createProxies(first, tenant.apiKey);
  // Each stream renames its own half of the proxies, so both sides contend for rows equally.
  const firstIds = ids.slice(0, ids.length / 2);
  const secondIds = ids.slice(ids.length / 2);

  const results = await alternateThroughput(ctx, "B6", [
    {
      name: "1 replica",
      spec: (durationS) => ({
        targets: [
          renameTarget(first.url, firstIds, half, tenant.apiKey),
          renameTarget(first.url, secondIds, half, tenant.apiKey),
        ],
        durationS,
      }),
    },
    {
      name: "2 replicas",
      spec: (durationS) => ({
        targets: [
          renameTarget(first.url, firstIds, half, tenant.apiKey),
          renameTarget(second.url, secondIds, half, tenant.apiKey),
        ],
        durationS,
      }),
    },
    {
      name: "floor, 1 server",
      spec: (durationS) => ({
        targets: [renameTarget(floorFirst.url, firstIds, half), renameTarget(floorFirst.url, secondIds, half)],
        durationS,
      }),
    },
    {
      name: "floor, 2 servers",
      spec: (durationS) => ({
        targets: [renameTarget(floorFirst.url, firstIds, half), renameTarget(floorSecond.url, secondIds, half)],
        durationS,
      }),
    },
  ]);
  const one = results["1 replica"];
  const two = results["2 replicas"];
  const floorOne = results["floor, 1 server"];
  const floorTwo = results["floor, 2 servers"];
  if (!one || !two || !floorOne || !floorTwo) throw new Error("B6: a side produced no result");

  return {
    id: "B6",
    title: "rename throughput with 1 and 2 gateway replicas on PostgreSQL",
    metrics: [
      metric({
        id: "B6",
        what: `rename, 2 replicas vs 1, ${2 * half} conns`,
        unit: "req/s",
        ours: Math.round(two.median),
        baseline: { name: "1 replica", value: Math.round(one.median) },
        target: { on: "ratio", op: ">=", value: 0.9 },
        samples: `${two.requests} + ${one.requests} requests`,
      }),
      metric({
        id: "B6",
        what: "floor: 2 vs 1 bare Express + pg servers",
        unit: "req/s",
        ours: Math.round(floorTwo.median),
        baseline: { name: "1 bare server", value: Math.round(floorOne.median) },
        samples: `${floorTwo.requests} + ${floorOne.requests} requests`,
      }),
    ],
    notes: [
      `Rounds (req/s): 2 replicas ${two.rounds.join(", ")}; 1 replica ${one.rounds.join(", ")}.`,
      "On a 2-core machine the replicas, PostgreSQL and the load generator share the same two cores, so a second " +
        "replica cannot add CPU; the ratio shows what running two costs (contention between replicas), not scale-out.",
      `The floor row does the same with the bare Express + pg server of B4 (rounds: 2 servers ${floorTwo.rounds.join(", ")}; ` +
        `1 server ${floorOne.rounds.join(", ")}): what a second process costs on this machine when the code has no shared state at all.`,
    ],
    details: { oneReplica: one, twoReplicas: two, floorOneServer: floorOne, floorTwoServers: floorTwo },
    seconds: (performance.now() - started) / 1000,
  };
}
