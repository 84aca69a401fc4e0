import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { createApiKey } from "../packages/gateway/src/auth/api-keys.ts";
import { newId } from "../packages/gateway/src/store/ids.ts";
import { openStore } from "../packages/gateway/src/store/store.ts";
import { createDatabase } from "../test/support/postgres.ts";
import { type BenchContext, type BenchOutcome, type Metric, metric, SkipBenchmark } from "./lib/bench.ts";
import { SimulatedFleet } from "./lib/fleet.ts";
import { round } from "./lib/measure.ts";
import type { ServerProcess } from "./lib/processes.ts";
import { median, summarize } from "./lib/stats.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
/**
 * Today's design, for the baseline: the last commit before the host checks were split between the
 * replicas (every replica checked every host, and wrote every outcome).
 */
const BASELINE_COMMIT = "c87f498";
const REPLICAS = 3;
const CLOCK_TICKS_PER_SECOND = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
/** Simulated browsers start at once: B10 measures the control plane, not a browser (B7 does). */
const START_DELAY_MS = 0;
const CONCURRENT_CREATES = 50;

interface Design {
  name: "ours" | "today";
  main: string;
}

interface DesignFigures {
  hosts: number;
  idleCpuPercent: number[];
  writesPerSecond: number;
  rssMb: number[];
  /** Of rssMb, the process's own (anonymous) memory; the rest is the node binary's shared file pages. */
  anonMb: number[];
  /** One create at a time: what a create costs without a queue. */
  sequentialCreateMs: { p50: number; count: number };
  createMs: { p50: number; p99: number; max: number; count: number; failed: number };
  /** Busy CPU seconds of the whole machine (gateways, PostgreSQL, simulator, runner) per concurrent create. */
  machineCpuMsPerCreate: number;
  doubleStarts: number;
  distinctHosts: boolean;
  outOfPoolMs: number[];
  /** The first replica once the others stopped: it checks every host alone. */
  lone: { rssMb: number; anonMb: number; idleCpuPercent: number };
}

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** A memory figure of /proc/<pid>/status (VmRSS, RssAnon), in MB. */
function statusMb(pid: number, field: "VmRSS" | "RssAnon"): number {
  const line = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(line?.[1] ?? 0) / 1024;
}

/** CPU seconds the whole machine has spent busy (every state but idle and iowait) so far. */
function machineBusySeconds(): number {
  const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0);
  return (total - (fields[3] ?? 0) - (fields[4] ?? 0)) / CLOCK_TICKS_PER_SECOND;
}

/** A checkout of BASELINE_COMMIT beside the run, sharing this tree's node_modules. */
function baselineTree(dir: string): string {
  const tree = join(dir, "b10-today");
  if (!existsSync(tree)) {
    try {
      execFileSync("git", ["-C", REPO, "worktree", "add", "--detach", tree, BASELINE_COMMIT], { stdio: "pipe" });
    } catch (error) {
      throw new SkipBenchmark(`cannot check out today's design (${BASELINE_COMMIT}): ${(error as Error).message}`);
    }
    symlinkSync(join(REPO, "node_modules"), join(tree, "node_modules"));
  }
  return tree;
}

function removeBaselineTree(dir: string): void {
  try {
    execFileSync("git", ["-C", REPO, "worktree", "remove", "--force", join(dir, "b10-today")], { stdio: "pipe" });
  } catch {
    // Not there.
  }
}

/**
 * Counts every row written to the database's tables from now on (a sequence bumped by a trigger on
 * each): the writes a fleet costs, whatever the gateways' own counters say.
 */
async function countWrites(databaseUrl: string): Promise<() => Promise<number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(`CREATE SEQUENCE bench_row_writes;
    CREATE FUNCTION bench_count_write() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN PERFORM nextval('bench_row_writes'); RETURN NULL; END $$;`);
  const { rows } = await client.query<{ name: string }>(
    "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'",
  );
  for (const { name } of rows) {
    await client.query(
      `CREATE TRIGGER bench_count_write AFTER INSERT OR UPDATE OR DELETE ON "${name}"
        FOR EACH ROW EXECUTE FUNCTION bench_count_write()`,
    );
  }
  await client.end();
  return async () => {
    const reader = new pg.Client({ connectionString: databaseUrl });
    await reader.connect();
    try {
      const { rows: state } = await reader.query<{ value: string; called: boolean }>(
        "SELECT last_value AS value, is_called AS called FROM bench_row_writes",
      );
      return state[0]?.called ? Number(state[0].value) : 0;
    } finally {
      await reader.end();
    }
  };
}

async function hostHealths(databaseUrl: string): Promise<Map<string, string>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ address: string; health: string }>("SELECT address, health FROM hosts");
    return new Map(rows.map((row) => [row.address, row.health]));
  } finally {
    await client.end();
  }
}

async function measureDesign(ctx: BenchContext, design: Design, hostCount: number): Promise<DesignFigures> {
  const { env, settings, progress } = ctx;
  // A whole period of the idle hosts' Describe (30 s) and more, so the figure is its average.
  const idleSeconds = settings.smoke ? 5 : 40;
  const creates = settings.smoke ? CONCURRENT_CREATES : 300;
  const deaths = settings.smoke ? 3 : 10;
  const fleet = await SimulatedFleet.start(hostCount, START_DELAY_MS);
  const gateways: ServerProcess[] = [];
  try {
    const databaseUrl = await createDatabase((await env.postgres()).url, `b10_${design.name}`);
    const store = await openStore({ databaseUrl });
    const { key: apiKey } = await createApiKey(store, `org-b10-${newId(6)}`, "b10");
    await store.close();
    const writes = await countWrites(databaseUrl);
    const secretsKey = randomBytes(32).toString("hex");
    // Started together, as a Deployment starts its replicas; the lone phase below shows one replica
    // that checks every host.
    gateways.push(
      ...(await Promise.all(
        Array.from({ length: REPLICAS }, (_, i) =>
          env.fleetGateway(`b10-${design.name}-${i + 1}`, design.main, {
            DATABASE_URL: databaseUrl,
            PORT: "0",
            HOST: "127.0.0.1",
            HOST_AGENTS: fleet.addresses.join(","),
            SECRETS_KEY: secretsKey,
            LOG_LEVEL: "info",
          }),
        ),
      )),
    );
    // Settled: every host found serving, and one check interval more for the gateways to calm down.
    for (;;) {
      const healths = await hostHealths(databaseUrl);
      if ([...healths.values()].filter((h) => h === "serving").length === hostCount) break;
      await sleep(250);
    }
    await sleep(6_000);

    progress(`B10 ${design.name}: ${hostCount} hosts, ${REPLICAS} replicas, idle for ${idleSeconds} s`);
    const cpuBefore = gateways.map((g) => cpuSeconds(g.pid));
    const writesBefore = await writes();
    const idleStarted = performance.now();
    await sleep(idleSeconds * 1000);
    const elapsed = (performance.now() - idleStarted) / 1000;
    const idleCpuPercent = gateways.map((g, i) => ((cpuSeconds(g.pid) - (cpuBefore[i] as number)) / elapsed) * 100);
    const writesPerSecond = ((await writes()) - writesBefore) / elapsed;
    const rss = gateways.map((g) => statusMb(g.pid, "VmRSS"));
    const anon = gateways.map((g) => statusMb(g.pid, "RssAnon"));

    const times: number[] = [];
    const sessions: { id: string; gateway: ServerProcess }[] = [];
    let failed = 0;
    const createOn = async (gateway: ServerProcess): Promise<number> => {
      const started = performance.now();
      const response = await fetch(`${gateway.url}/browsers`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ timeout_seconds: 3600 }),
      });
      const body = await response.text();
      if (response.ok) sessions.push({ id: (JSON.parse(body) as { session_id: string }).session_id, gateway });
      else failed++;
      return performance.now() - started;
    };
    const deleteAll = () =>
      Promise.all(
        sessions.splice(0).map(({ id, gateway }) =>
          fetch(`${gateway.url}/browsers/${id}`, {
            method: "DELETE",
            headers: { authorization: `Bearer ${apiKey}` },
          }),
        ),
      );

    const sequential = settings.smoke ? 5 : 30;
    progress(`B10 ${design.name}: ${sequential} creates one at a time`);
    const sequentialTimes: number[] = [];
    for (let i = 0; i < sequential; i++) sequentialTimes.push(await createOn(gateways[i % REPLICAS] as ServerProcess));
    await deleteAll();
    failed = 0;

    progress(`B10 ${design.name}: ${creates} creates, ${CONCURRENT_CREATES} at a time across the replicas`);
    let next = 0;
    const worker = async () => {
      while (next < creates) times.push(await createOn(gateways[next++ % REPLICAS] as ServerProcess));
    };
    const busyBefore = machineBusySeconds();
    await Promise.all(Array.from({ length: CONCURRENT_CREATES }, worker));
    const machineCpuMsPerCreate = ((machineBusySeconds() - busyBefore) * 1000) / creates;
    const created = summarize(times);
    const { doubleStarts } = await fleet.stats();
    const check = new pg.Client({ connectionString: databaseUrl });
    await check.connect();
    const { rows } = await check.query<{ sessions: string; hosts: string }>(
      "SELECT count(*) AS sessions, count(DISTINCT host_address) AS hosts FROM browser_sessions WHERE deleted_at IS NULL",
    );
    await check.end();
    const distinctHosts = rows[0]?.sessions === rows[0]?.hosts && Number(rows[0]?.sessions) === sessions.length;
    await deleteAll();

    progress(`B10 ${design.name}: ${deaths} hosts die`);
    const healths = await hostHealths(databaseUrl);
    const victims = fleet.addresses.filter((a) => healths.get(a) === "serving").slice(-deaths);
    const killedAt = new Map<string, number>();
    for (const address of victims) {
      await fleet.kill(address);
      killedAt.set(address, performance.now());
    }
    const outOfPoolMs: number[] = [];
    const deadline = performance.now() + 60_000;
    while (killedAt.size > 0 && performance.now() < deadline) {
      const now = await hostHealths(databaseUrl);
      const seenAt = performance.now();
      for (const [address, at] of killedAt) {
        if (now.get(address) !== "serving") {
          outOfPoolMs.push(seenAt - at);
          killedAt.delete(address);
        }
      }
      await sleep(100);
    }
    if (killedAt.size > 0) throw new Error(`${design.name}: ${killedAt.size} dead hosts stayed in the pool for 60 s`);

    // The others stop; the first replica takes their hosts over (a check interval), opens a channel to
    // each, and settles (its idle hosts are described within 30 s).
    progress(`B10 ${design.name}: one replica alone checks every host`);
    for (const gateway of gateways.slice(1)) await gateway.stop();
    const lone = gateways[0] as ServerProcess;
    await sleep(settings.smoke ? 8_000 : 35_000);
    const loneCpuBefore = cpuSeconds(lone.pid);
    const loneStarted = performance.now();
    await sleep(settings.smoke ? 4_000 : 20_000);
    const loneCpu = ((cpuSeconds(lone.pid) - loneCpuBefore) / ((performance.now() - loneStarted) / 1000)) * 100;
    return {
      hosts: hostCount,
      idleCpuPercent,
      writesPerSecond,
      rssMb: rss,
      anonMb: anon,
      sequentialCreateMs: { p50: median(sequentialTimes), count: sequentialTimes.length },
      machineCpuMsPerCreate,
      lone: { rssMb: statusMb(lone.pid, "VmRSS"), anonMb: statusMb(lone.pid, "RssAnon"), idleCpuPercent: loneCpu },
      createMs: { p50: created.p50Ms, p99: created.p99Ms, max: created.maxMs, count: created.count, failed },
      doubleStarts,
      distinctHosts,
      outOfPoolMs,
    };
  } finally {
    for (const gateway of gateways) await gateway.stop();
    await fleet.stop();
  }
}

/**
 * B10: a fleet of simulated host agents (bench/fleet-simulator.ts, one process) behind three gateway
 * replicas on one PostgreSQL database, with today's tree and with the design before the host checks
 * were split between replicas (BASELINE_COMMIT, checked out beside the run): the control plane's
 * idle cost, its memory, allocation under concurrency, and how fast a dead host leaves the pool.
 */
export async function b10FleetScale(ctx: BenchContext): Promise<BenchOutcome> {
  const started = performance.now();
  const hosts = ctx.settings.smoke ? 100 : 1000;
  const designs: Design[] = [
    { name: "ours", main: join(REPO, "packages/gateway/src/main.ts") },
    { name: "today", main: join(baselineTree(ctx.env.dir), "packages/gateway/src/main.ts") },
  ];
  const figures: Partial<Record<Design["name"], DesignFigures>> = {};
  try {
    for (const design of designs) figures[design.name] = await measureDesign(ctx, design, hosts);
  } finally {
    removeBaselineTree(ctx.env.dir);
  }
  const ours = figures.ours as DesignFigures;
  const today = figures.today as DesignFigures;
  const max = (values: number[]) => Math.max(...values);
  const samples = `${hosts} hosts, ${REPLICAS} replicas each`;
  const allocationOk = (f: DesignFigures) => f.doubleStarts === 0 && f.distinctHosts;
  if (!allocationOk(ours)) throw new Error(`B10: a host was given to two sessions: ${JSON.stringify(ours)}`);
  const metrics: Metric[] = [
    metric({
      id: "B10",
      what: "idle CPU per gateway replica, the busiest of three (no requests, host checks only)",
      unit: "% of a core",
      ours: round(max(ours.idleCpuPercent), 2),
      baseline: { name: "today's design", value: round(max(today.idleCpuPercent), 2) },
      target: { on: "value", op: "<=", value: 3 },
      samples,
    }),
    metric({
      id: "B10",
      what: "store row writes per second while nothing changes, all replicas",
      unit: "writes/s",
      ours: round(ours.writesPerSecond, 2),
      baseline: { name: "today's design", value: round(today.writesPerSecond, 1) },
      target: { on: "value", op: "<=", value: 1 },
      samples,
    }),
    metric({
      id: "B10",
      what: "gateway RSS, the largest of three replicas",
      unit: "MB",
      ours: round(max(ours.rssMb), 1),
      baseline: { name: "today's design", value: round(max(today.rssMb), 1) },
      target: { on: "value", op: "<=", value: 150 },
      samples,
    }),
    metric({
      id: "B10",
      what: "the same replica's own memory (RssAnon: RSS without the node binary's shared pages)",
      unit: "MB",
      ours: round(ours.anonMb[ours.rssMb.indexOf(max(ours.rssMb))] as number, 1),
      baseline: {
        name: "today's design",
        value: round(today.anonMb[today.rssMb.indexOf(max(today.rssMb))] as number, 1),
      },
      samples,
    }),
    metric({
      id: "B10",
      what: `gateway RSS of one replica alone checking all ${hosts} hosts (the others stopped)`,
      unit: "MB",
      ours: round(ours.lone.rssMb, 1),
      baseline: { name: "today's design", value: round(today.lone.rssMb, 1) },
      target: { on: "value", op: "<=", value: 150 },
      samples: `${hosts} hosts, 1 replica each`,
    }),
    metric({
      id: "B10",
      what: "idle CPU of that lone replica",
      unit: "% of a core",
      ours: round(ours.lone.idleCpuPercent, 2),
      baseline: { name: "today's design", value: round(today.lone.idleCpuPercent, 2) },
      samples: `${hosts} hosts, 1 replica each`,
    }),
    metric({
      id: "B10",
      what: `POST /browsers p99, ${CONCURRENT_CREATES} creating at once across the replicas`,
      unit: "ms",
      ours: round(ours.createMs.p99, 1),
      baseline: { name: "today's design", value: round(today.createMs.p99, 1) },
      target: { on: "value", op: "<=", value: 50 },
      samples: `${ours.createMs.count} + ${today.createMs.count} creates`,
    }),
    metric({
      id: "B10",
      what: "POST /browsers p50, the same creates",
      unit: "ms",
      ours: round(ours.createMs.p50, 1),
      baseline: { name: "today's design", value: round(today.createMs.p50, 1) },
      samples: `${ours.createMs.count} + ${today.createMs.count} creates`,
    }),
    metric({
      id: "B10",
      what: "floor: POST /browsers p50, one create at a time (no queue)",
      unit: "ms",
      ours: round(ours.sequentialCreateMs.p50, 1),
      baseline: { name: "today's design", value: round(today.sequentialCreateMs.p50, 1) },
      samples: `${ours.sequentialCreateMs.count} + ${today.sequentialCreateMs.count} creates`,
    }),
    metric({
      id: "B10",
      what: `floor: the machine's busy CPU per create while ${CONCURRENT_CREATES} create at once (all processes)`,
      unit: "ms",
      ours: round(ours.machineCpuMsPerCreate, 1),
      baseline: { name: "today's design", value: round(today.machineCpuMsPerCreate, 1) },
      samples: `${ours.createMs.count} + ${today.createMs.count} creates`,
    }),
    metric({
      id: "B10",
      what: "a dead host out of the pool (slowest of those killed)",
      unit: "s",
      ours: round(max(ours.outOfPoolMs) / 1000, 2),
      baseline: { name: "today's design", value: round(max(today.outOfPoolMs) / 1000, 2) },
      target: { on: "value", op: "<=", value: 5 },
      samples: `${ours.outOfPoolMs.length} + ${today.outOfPoolMs.length} hosts killed`,
    }),
  ];
  const describe = (f: DesignFigures) =>
    `CPU ${f.idleCpuPercent.map((v) => v.toFixed(2)).join(", ")} % of a core; RSS ${f.rssMb
      .map((v) => v.toFixed(0))
      .join(", ")} MB (own ${f.anonMb.map((v) => v.toFixed(0)).join(", ")} MB); alone: RSS ${f.lone.rssMb.toFixed(
      0,
    )} MB (own ${f.lone.anonMb.toFixed(0)} MB), CPU ${f.lone.idleCpuPercent.toFixed(2)} %; ` +
    `${f.writesPerSecond.toFixed(2)} row writes/s; one create at a time p50 ${f.sequentialCreateMs.p50.toFixed(1)} ms; ` +
    `${CONCURRENT_CREATES} at once: ${f.machineCpuMsPerCreate.toFixed(1)} ms of machine CPU each, p50 ${f.createMs.p50.toFixed(1)} ms, ` +
    `p99 ${f.createMs.p99.toFixed(1)} ms, max ${f.createMs.max.toFixed(1)} ms, ${f.createMs.failed} failed; ` +
    `${f.doubleStarts} starts on a busy host, ${f.distinctHosts ? "every session on its own host" : "HOSTS SHARED"}; ` +
    `dead hosts out of the pool after ${f.outOfPoolMs.map((ms) => (ms / 1000).toFixed(1)).join(", ")} s (median ${(
      median(f.outOfPoolMs) / 1000
    ).toFixed(1)} s)`;
  return {
    id: "B10",
    title: "A fleet of simulated hosts behind three gateway replicas on PostgreSQL, against today's design",
    metrics,
    notes: [
      `The fleet: one process (bench/fleet-simulator.ts) serving ${hosts} simulated host agents on loopback ports ` +
        `(grpc.health.v1, Describe, StartSession after ${START_DELAY_MS} ms, StopSession, WaitSessionEnd), a fresh one ` +
        `per design. ${REPLICAS} gateways (production Node settings, HOST_CHECK_INTERVAL_MS at its default 5 s, ` +
        `LOG_LEVEL=info) on a fresh PostgreSQL database each, every host registered through HOST_AGENTS, started ` +
        "together as a Deployment starts them. Measured once every host was serving and 6 s more had passed.",
      `Today's design is commit ${BASELINE_COMMIT}, checked out beside the run: every replica checks every host ` +
        "and writes every outcome. Ours: the replicas split the hosts (advisory-lock membership, rendezvous hashing), " +
        "a check writes only what changed, and an idle host is probed over UDP (the simulator answers probes as the " +
        "agent does) instead of holding a gRPC channel.",
      "Writes are counted in the database itself: a trigger on every table bumps a sequence per row written. " +
        `Idle CPU is user + system time from /proc over the idle window; RSS from /proc after it.`,
      `Creates: ${CONCURRENT_CREATES} clients at once, each sending POST /browsers to the replicas in turn; every ` +
        "created session then checked to be on a host of its own (the store's active sessions, and the simulator's " +
        "count of starts on a host running another session). Then some idle hosts are killed (their ports closed) " +
        "and the store is polled every 100 ms until each is no longer serving. Last, the second and third replicas " +
        "stop and the first, alone, takes every host over: its RSS and CPU once it settled (35 s, then 20 s of CPU).",
      `Ours: ${describe(ours)}.`,
      `Today's design: ${describe(today)}.`,
    ],
    details: { figures },
    seconds: (performance.now() - started) / 1000,
  };
}
