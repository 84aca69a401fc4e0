// npm run bench [-- --smoke] [-- --profile] [-- --only=B1,B3] [-- --report]
// Starts everything itself, runs B1–B9 each against its baseline in the same run, prints a table,
// and writes bench/results.json and bench/RESULTS.md (smoke runs write to a temporary folder instead,
// so they never overwrite the committed results). A run with --only replaces the outcomes of the
// benchmarks it ran and keeps the others from the previous results.json, marked with the run they
// came from.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { b1PressKeyLatency } from "./b1-press-key-latency.ts";
import { b2PressKeyKeysPerSecond } from "./b2-press-key-keys-per-second.ts";
import { b3FileInfoThroughput } from "./b3-file-info-throughput.ts";
import { b4ProxyRenameThroughput } from "./b4-proxy-rename-throughput.ts";
import { b5PeakRss } from "./b5-peak-rss.ts";
import { b6Replicas } from "./b6-replicas.ts";
import { b7SessionReady } from "./b7-session-ready.ts";
import { b8IdleAgentMemory } from "./b8-idle-agent-memory.ts";
import { b9CdpRoundTrip } from "./b9-cdp-round-trip.ts";
import { b10FleetScale } from "./b10-fleet-scale.ts";
import { b11Screenshot } from "./b11-screenshot.ts";
import { b12TypeText } from "./b12-type-text.ts";
import { b13Click } from "./b13-click.ts";
import { b14ProxyPageLoad } from "./b14-proxy-page-load.ts";
import { type BenchContext, type BenchOutcome, type EarlierRun, FULL, SkipBenchmark, SMOKE } from "./lib/bench.ts";
import { summarizeProfile } from "./lib/cpu-profile.ts";
import { BenchEnvironment } from "./lib/environment.ts";
import { currentLoad, describeMachine } from "./lib/machine.ts";
import { markdownReport, type RunReport, textTable } from "./lib/report.ts";

const BENCH_DIR = fileURLToPath(new URL(".", import.meta.url));
const ANALYSIS_FILE = join(BENCH_DIR, "analysis.md");

const args = process.argv.slice(2);

// --report: rewrite RESULTS.md from the last results.json and analysis.md, without measuring again.
if (args.includes("--report")) {
  const last = JSON.parse(readFileSync(join(BENCH_DIR, "results.json"), "utf8")) as RunReport;
  const analysis = existsSync(ANALYSIS_FILE) ? readFileSync(ANALYSIS_FILE, "utf8") : "";
  writeFileSync(join(BENCH_DIR, "RESULTS.md"), markdownReport(last, analysis));
  process.stdout.write(`${textTable(last.outcomes)}\n\nrewrote ${join(BENCH_DIR, "RESULTS.md")}\n`);
  process.exit(0);
}
const smoke = args.includes("--smoke") || process.env.BENCH_SMOKE === "1";
const profile = args.includes("--profile");
const only = args
  .find((a) => a.startsWith("--only="))
  ?.slice("--only=".length)
  .split(",")
  .map((id) => id.trim().toUpperCase());

const benchmarks: { id: string; run: (ctx: BenchContext) => Promise<BenchOutcome> }[] = [
  { id: "B1", run: b1PressKeyLatency },
  { id: "B2", run: b2PressKeyKeysPerSecond },
  { id: "B3", run: b3FileInfoThroughput },
  // Before B4: like B1–B3 they use the SQLite tenant's session, which B4's PostgreSQL gateways end
  // (they check the same agent, and their store does not give it that session).
  { id: "B12", run: b12TypeText },
  { id: "B13", run: b13Click },
  { id: "B4", run: b4ProxyRenameThroughput },
  // After B1–B4 (and B12–B13) and before B6 starts the second replica: the peaks B5 reports are theirs.
  { id: "B5", run: b5PeakRss },
  { id: "B6", run: b6Replicas },
  { id: "B7", run: b7SessionReady },
  // After B7: reports B7's agent, idle again after its sessions, beside a fresh one.
  { id: "B8", run: b8IdleAgentMemory },
  // After B8, which reports B7's agent idle: one more session on it, CDP through the gateway and direct.
  { id: "B9", run: b9CdpRoundTrip },
  { id: "B10", run: b10FleetScale },
  { id: "B11", run: b11Screenshot },
  { id: "B14", run: b14ProxyPageLoad },
];

const started = performance.now();
const elapsed = () => ((performance.now() - started) / 1000).toFixed(1).padStart(6);
const progress = (message: string) => process.stdout.write(`[${elapsed()} s] ${message}\n`);

const outDir = smoke ? join(tmpdir(), "bench-smoke") : BENCH_DIR;
const profileDir = profile ? join(tmpdir(), `bench-profiles-${Date.now()}`) : undefined;
const machine = describeMachine();
const env = new BenchEnvironment({ profileDir });
const ctx: BenchContext = { env, settings: smoke ? SMOKE : FULL, progress };

let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    interrupted = true;
    progress(`${signal}: stopping everything`);
    void env.stop().finally(() => process.exit(130));
  });
}

progress(
  `${smoke ? "smoke" : "full"} run on ${machine.cpuModel} × ${machine.cores}, Node ${machine.node}; logs in ${env.logDir}`,
);
if (machine.loadAtStart > 0.5) {
  progress(`warning: load average ${machine.loadAtStart.toFixed(2)}: other work on this machine will skew the ratios`);
}
const outcomes: BenchOutcome[] = [];
let failure: unknown;
try {
  for (const benchmark of benchmarks) {
    if (only && !only.includes(benchmark.id)) continue;
    progress(`${benchmark.id}: starting`);
    const benchStarted = performance.now();
    try {
      const outcome = await benchmark.run(ctx);
      outcomes.push(outcome);
      progress(`${benchmark.id}: done in ${outcome.seconds.toFixed(1)} s`);
    } catch (error) {
      if (!(error instanceof SkipBenchmark)) throw error;
      progress(`${benchmark.id}: not run: ${error.message}`);
      outcomes.push({
        id: benchmark.id,
        title: benchmark.id,
        metrics: [],
        notes: [],
        details: {},
        seconds: (performance.now() - benchStarted) / 1000,
        skipped: error.message,
      });
    }
  }
} catch (error) {
  failure = error;
  const exited = env.exitedEarly();
  if (exited.length > 0) progress(`these processes had already ended: ${exited.join(", ")}`);
} finally {
  if (!interrupted) await env.stop({ keepLogs: failure !== undefined });
}
if (failure) {
  process.stderr.write(`bench failed: ${failure instanceof Error ? (failure.stack ?? failure.message) : failure}\n`);
  process.stderr.write(`logs of every process kept in ${env.logDir}\n`);
  process.exit(1);
}

machine.loadAtEnd = currentLoad();
const report: RunReport = {
  machine,
  mode: smoke ? "smoke" : "full",
  command: `npm run bench${args.length > 0 ? ` -- ${args.join(" ")}` : ""}`,
  totalSeconds: (performance.now() - started) / 1000,
  outcomes,
};
// A subset run keeps the other benchmarks' recorded outcomes, in the suite's order.
const resultsFile = join(outDir, "results.json");
if (only && !smoke && existsSync(resultsFile)) {
  const previous = JSON.parse(readFileSync(resultsFile, "utf8")) as RunReport;
  const earlier: EarlierRun = {
    command: previous.command,
    date: previous.machine.date,
    commit: previous.machine.commit,
    dirty: previous.machine.dirty,
    loadAtStart: previous.machine.loadAtStart,
    loadAtEnd: previous.machine.loadAtEnd,
  };
  const ran = new Set(outcomes.map((o) => o.id));
  const kept = previous.outcomes.filter((o) => !ran.has(o.id)).map((o) => ({ ...o, from: o.from ?? earlier }));
  const position = (id: string) => {
    const index = benchmarks.findIndex((b) => b.id === id);
    return index < 0 ? benchmarks.length : index;
  };
  report.outcomes = [...kept, ...outcomes].sort((a, b) => position(a.id) - position(b.id));
}
const analysis = existsSync(ANALYSIS_FILE) ? readFileSync(ANALYSIS_FILE, "utf8") : "";
mkdirSync(outDir, { recursive: true });
writeFileSync(resultsFile, `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(outDir, "RESULTS.md"), markdownReport(report, analysis));

process.stdout.write(`\n${textTable(outcomes)}\n\n`);
progress(`wrote ${join(outDir, "results.json")} and ${join(outDir, "RESULTS.md")}`);

if (profileDir) {
  for (const file of readdirSync(profileDir).filter((f) => f.endsWith(".cpuprofile"))) {
    const summary = summarizeProfile(join(profileDir, file));
    process.stdout.write(
      `\n${file}: busy ${(summary.busyMs / 1000).toFixed(1)} s of ${(summary.sampledMs / 1000).toFixed(1)} s sampled\n`,
    );
    for (const l of summary.layers.slice(0, 14)) {
      process.stdout.write(`  ${l.busyPercent.toFixed(1).padStart(5)}%  ${l.layer}\n`);
    }
    process.stdout.write("  top functions by self time (share of busy time):\n");
    for (const f of summary.functions) {
      process.stdout.write(`  ${f.busyPercent.toFixed(1).padStart(5)}%  ${f.name}  ${f.where}\n`);
    }
  }
  progress(`profiles in ${profileDir} (open in Chrome DevTools or speedscope)`);
}
