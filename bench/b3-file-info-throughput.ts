import { type BenchContext, type BenchOutcome, metric } from "./lib/bench.ts";
import { alternateThroughput } from "./lib/measure.ts";

const PATH = "/usr/bin/env";

/**
 * B3: file_info at 32 connections through both hops (HTTP → gateway, gRPC → agent → lstat) against a
 * bare node:http server that lstats in the same process (one hop). Both answer the same record.
 */
export async function b3FileInfoThroughput(ctx: BenchContext): Promise<BenchOutcome> {
  const started = performance.now();
  const { env, settings } = ctx;
  const tenant = await env.tenant("sqlite");
  const gateway = await env.gateway("gateway-sqlite", "sqlite");
  const baseline = await env.baseline("lstat-server");
  const floor = await env.floor();
  const query = `path=${encodeURIComponent(PATH)}`;
  const connections = settings.connections;

  const results = await alternateThroughput(ctx, "B3", [
    {
      name: "lstat server",
      spec: (durationS) => ({
        targets: [{ url: `${baseline.url}/fs/file_info?${query}`, connections, method: "GET" }],
        durationS,
      }),
    },
    {
      name: "ours",
      spec: (durationS) => ({
        targets: [
          {
            url: `${gateway.url}/browsers/${tenant.sessionName}/fs/file_info?${query}`,
            connections,
            method: "GET",
            headers: { authorization: `Bearer ${tenant.apiKey}` },
          },
        ],
        durationS,
      }),
    },
    {
      name: "floor",
      spec: (durationS) => ({
        targets: [{ url: `${floor.url}/fs/file_info?${query}`, connections, method: "GET" }],
        durationS,
      }),
    },
  ]);
  const ours = results.ours;
  const base = results["lstat server"];
  const bare = results.floor;
  if (!ours || !base || !bare) throw new Error("B3: a side produced no result");

  return {
    id: "B3",
    title: `file_info throughput at ${connections} connections, two hops`,
    metrics: [
      metric({
        id: "B3",
        what: `file_info throughput, ${connections} conns`,
        unit: "req/s",
        ours: Math.round(ours.median),
        baseline: { name: "bare node:http + lstat", value: Math.round(base.median) },
        target: { on: "ratio", op: ">=", value: 0.5 },
        samples: `${ours.requests} + ${base.requests} requests`,
      }),
      metric({
        id: "B3",
        what: "floor: bare http → bare grpc-js → lstat",
        unit: "req/s",
        ours: Math.round(bare.median),
        baseline: { name: "bare node:http + lstat", value: Math.round(base.median) },
        samples: `${bare.requests} + ${base.requests} requests`,
      }),
    ],
    notes: [
      `path=${PATH}; ${settings.throughputRounds} alternating round(s) of ${settings.throughputRoundS} s per side after a ` +
        `${settings.throughputWarmupS} s warm-up; median round. Rounds (req/s): ours ${ours.rounds.join(", ")}; ` +
        `baseline ${base.rounds.join(", ")}; floor ${bare.rounds.join(", ")}.`,
      "The floor row is the same two hops with nothing else (bench/baselines/floor-*.ts): its ratio bounds what any " +
        "gateway → agent design on Node + grpc-js can reach here, whatever the gateway does per request.",
      `Mean latency under this load: ours ${ours.meanLatencyMs.toFixed(2)} ms, baseline ${base.meanLatencyMs.toFixed(2)} ms.`,
    ],
    details: { ours, baseline: base, floor: bare },
    seconds: (performance.now() - started) / 1000,
  };
}
