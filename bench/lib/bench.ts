import type { BenchEnvironment } from "./environment.ts";

export interface Target {
  /** What the ratio is compared with: e.g. ratio ≤ 0.1, or for B5 the value itself ≤ 150 MB. */
  on: "ratio" | "value";
  op: "<=" | ">=";
  value: number;
  /** How a limit computed from the run's own baseline was derived (B9: "1.5 × direct + 0.3 ms"). */
  basis?: string;
}

/** One line of the results table. */
export interface Metric {
  id: string;
  what: string;
  unit: string;
  ours: number;
  baseline?: { name: string; value: number };
  /** ours ÷ baseline, or for throughput-like metrics where higher is better still ours ÷ baseline. */
  ratio?: number;
  target?: Target;
  met?: boolean;
  /** How many measurements stand behind the numbers, e.g. "2000 + 2000 requests". */
  samples: string;
}

export interface BenchOutcome {
  id: string;
  title: string;
  metrics: Metric[];
  /** Why a number is what it is: the floor, caveats, what was checked. */
  notes: string[];
  /** Raw measurements for results.json. */
  details: Record<string, unknown>;
  seconds: number;
  /** Set when the benchmark could not run at all (e.g. the API it needs is not there). */
  skipped?: string;
  /** Set on an outcome kept from an earlier results.json by a run with --only that did not run it. */
  from?: EarlierRun;
}

/** The run an outcome was kept from. */
export interface EarlierRun {
  command: string;
  date: string;
  commit: string;
  dirty: boolean;
  loadAtStart: number;
  loadAtEnd?: number;
}

export interface BenchSettings {
  smoke: boolean;
  latencyWarmup: number;
  /** Per side, split over `latencyRounds` alternating rounds. */
  latencySamples: number;
  latencyRounds: number;
  b2Warmup: number;
  b2Repetitions: number;
  throughputWarmupS: number;
  throughputRounds: number;
  throughputRoundS: number;
  connections: number;
  /** B7: sessions per side (ours, cold launch), in alternating rounds, after one warm-up each. */
  browserSessions: number;
  /** B8: seconds the idle agent settles after its spare is up, then samples taken one second apart. */
  memorySettleS: number;
  memorySamples: number;
  /** B9: Browser.getVersion round trips per leg (ours, floor, direct), split over `cdpRounds` rounds taking the legs in turn. */
  cdpRoundTrips: number;
  cdpRounds: number;
  /** B9: round trips per leg before the measured ones. */
  cdpWarmup: number;
  /** B9: screenshots per leg and round, in `screenshotRounds` rounds taking the legs in turn, after a short warm-up. */
  screenshots: number;
  screenshotRounds: number;
}

export const FULL: BenchSettings = {
  smoke: false,
  latencyWarmup: 200,
  latencySamples: 2000,
  latencyRounds: 2,
  b2Warmup: 3,
  b2Repetitions: 20,
  throughputWarmupS: 3,
  // Five short rounds rather than three long ones: on a noisy VM the median of five moves less.
  throughputRounds: 5,
  throughputRoundS: 4,
  connections: 32,
  browserSessions: 20,
  memorySettleS: 5,
  memorySamples: 5,
  cdpRoundTrips: 2000,
  cdpRounds: 10,
  cdpWarmup: 200,
  screenshots: 15,
  screenshotRounds: 5,
};

export const SMOKE: BenchSettings = {
  smoke: true,
  latencyWarmup: 20,
  latencySamples: 300,
  latencyRounds: 1,
  b2Warmup: 1,
  b2Repetitions: 3,
  throughputWarmupS: 0.5,
  throughputRounds: 1,
  throughputRoundS: 1,
  connections: 32,
  browserSessions: 3,
  memorySettleS: 2,
  memorySamples: 2,
  cdpRoundTrips: 200,
  cdpRounds: 2,
  cdpWarmup: 20,
  screenshots: 4,
  screenshotRounds: 1,
};

export interface BenchContext {
  env: BenchEnvironment;
  settings: BenchSettings;
  progress(message: string): void;
}

export class SkipBenchmark extends Error {}

export function check(value: number, target: Target): boolean {
  return target.op === "<=" ? value <= target.value : value >= target.value;
}

/** A metric with ratio and verdict filled in from ours, the baseline and the target. */
export function metric(fields: Omit<Metric, "ratio" | "met"> & { ratio?: number }): Metric {
  const ratio = fields.ratio ?? (fields.baseline ? fields.ours / fields.baseline.value : undefined);
  const judged = fields.target?.on === "value" ? fields.ours : ratio;
  const met = fields.target && judged !== undefined ? check(judged, fields.target) : undefined;
  return { ...fields, ratio, met };
}
