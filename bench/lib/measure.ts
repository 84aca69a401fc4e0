import { execFile } from "node:child_process";
import type { BenchContext } from "./bench.ts";
import { runLoad } from "./load.ts";
import type { LoadResult, LoadSpec } from "./load-spec.ts";
import { median } from "./stats.ts";

export interface ThroughputSide {
  name: string;
  /** The load for one round of the given length (a warm-up is a round whose result is dropped). */
  spec(durationS: number): LoadSpec;
}

export interface ThroughputResult {
  /** Requests per second of each round, in order. */
  rounds: number[];
  median: number;
  requests: number;
  meanLatencyMs: number;
}

/**
 * Runs the sides in alternating rounds (A B A B …) after one warm-up each, so slow drift of a noisy
 * machine (other tenants, thermal, page cache) lands on both sides alike; reports the median round.
 */
export async function alternateThroughput(
  ctx: BenchContext,
  label: string,
  sides: ThroughputSide[],
): Promise<Record<string, ThroughputResult>> {
  const { throughputWarmupS, throughputRounds, throughputRoundS } = ctx.settings;
  const results: Record<string, LoadResult[]> = {};
  for (const side of sides) {
    ctx.progress(`${label}: warm-up ${side.name} (${throughputWarmupS} s)`);
    await runLoad(side.spec(throughputWarmupS));
    results[side.name] = [];
  }
  for (let round = 1; round <= throughputRounds; round++) {
    for (const side of sides) {
      const result = await runLoad(side.spec(throughputRoundS));
      results[side.name]?.push(result);
      ctx.progress(
        `${label}: round ${round}/${throughputRounds} ${side.name}: ${result.requestsPerS.toFixed(0)} req/s ` +
          `(p50 ${result.latency.p50Ms.toFixed(2)} ms)`,
      );
    }
  }
  return Object.fromEntries(
    Object.entries(results).map(([name, rounds]) => [
      name,
      {
        rounds: rounds.map((r) => Math.round(r.requestsPerS)),
        median: median(rounds.map((r) => r.requestsPerS)),
        requests: rounds.reduce((sum, r) => sum + r.ok, 0),
        meanLatencyMs:
          rounds.reduce((sum, r) => sum + r.latency.meanMs * r.ok, 0) / rounds.reduce((s, r) => s + r.ok, 0),
      },
    ]),
  );
}

/** Wall time of each run of a command, one after another, as a client exec'ing it would see it. */
export async function timeCommand(
  file: string,
  args: string[],
  runs: number,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await new Promise<void>((resolve, reject) => {
      execFile(file, args, { env }, (error, _stdout, stderr) =>
        error ? reject(new Error(`${file} ${args.slice(0, 4).join(" ")}…: ${error.message} ${stderr}`)) : resolve(),
      );
    });
    times.push(performance.now() - started);
  }
  return times;
}

export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
