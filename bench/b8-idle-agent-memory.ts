import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { MARKER_VARIABLE } from "../packages/host-agent/src/browser/processes.ts";
import { decideSandbox } from "../packages/host-agent/src/browser/sandbox.ts";
import { type BenchContext, type BenchOutcome, type Metric, metric } from "./lib/bench.ts";
import { launchColdChromium, waitForFocusedSpare } from "./lib/chromium.ts";
import { BROWSER_SCREEN, BROWSER_WINDOW, type BrowserAgent, CHROMIUM_PATH } from "./lib/environment.ts";
import { round } from "./lib/measure.ts";
import { memoryOf, processesWithEnvironment, processTree } from "./lib/process-tree.ts";
import { median } from "./lib/stats.ts";

const MB = 1024 * 1024;
const PARTS = ["agent", "Xvfb", "Chromium"] as const;
type Part = (typeof PARTS)[number];

/** One look at a set of processes: MB per part, RSS and private dirty memory, and how many Chromium processes there were. */
interface Sample {
  rss: Record<Part | "total", number>;
  dirty: Record<Part | "total", number>;
  chromiumProcesses: number;
  /** Every process counted (in the last sample, after measure()). */
  pids: number[];
}

/**
 * The processes below `roots` in the kernel's children lists (for an agent: itself, its Xvfb, every
 * Chromium process), together with those carrying the data directory's marker. The marker alone
 * would miss most of Chromium: its zygotes, GPU, utility and renderer processes overwrite their
 * environment block with their title, so /proc/<pid>/environ no longer shows it.
 */
function sample(marker: string, roots: readonly number[], agentPid: number | undefined): Sample {
  const pids = new Set(processesWithEnvironment(marker));
  for (const root of roots) for (const pid of processTree(root)) pids.add(pid);
  const zero = () => ({ agent: 0, Xvfb: 0, Chromium: 0, total: 0 });
  const result: Sample = { rss: zero(), dirty: zero(), chromiumProcesses: 0, pids: [...pids] };
  for (const p of memoryOf([...pids])) {
    const part: Part = p.pid === agentPid ? "agent" : p.name === "Xvfb" ? "Xvfb" : "Chromium";
    if (part === "Chromium") result.chromiumProcesses++;
    result.rss[part] += p.rssBytes / MB;
    result.dirty[part] += p.privateDirtyBytes / MB;
    result.rss.total += p.rssBytes / MB;
    result.dirty.total += p.privateDirtyBytes / MB;
  }
  return result;
}

/** memorySamples samples one second apart after memorySettleS seconds; the median of each figure. */
async function measure(
  ctx: BenchContext,
  marker: string,
  roots: readonly number[],
  agentPid: number | undefined,
): Promise<Sample> {
  await sleep(ctx.settings.memorySettleS * 1000);
  const samples: Sample[] = [];
  for (let i = 0; i < ctx.settings.memorySamples; i++) {
    if (i > 0) await sleep(1000);
    samples.push(sample(marker, roots, agentPid));
  }
  const pick = (kind: "rss" | "dirty", part: Part | "total") => round(median(samples.map((s) => s[kind][part])), 1);
  const figures = (kind: "rss" | "dirty") =>
    Object.fromEntries(
      ["agent", "Xvfb", "Chromium", "total"].map((part) => [part, pick(kind, part as Part)]),
    ) as Record<Part | "total", number>;
  return {
    rss: figures("rss"),
    dirty: figures("dirty"),
    chromiumProcesses: median(samples.map((s) => s.chromiumProcesses)),
    pids: samples.at(-1)?.pids ?? [],
  };
}

function figures(s: Sample): string {
  return (
    `RSS ${s.rss.total} MB (agent ${s.rss.agent}, Xvfb ${s.rss.Xvfb}, Chromium ${s.rss.Chromium} in ` +
    `${s.chromiumProcesses} processes); private dirty ${s.dirty.total} MB (agent ${s.dirty.agent}, Xvfb ${s.dirty.Xvfb}, Chromium ${s.dirty.Chromium})`
  );
}

/** Throws unless every process counted has ended (zombies included: their parent has ended too). */
function assertGone(what: string, pids: readonly number[]): void {
  const left = memoryOf(pids).map((p) => `${p.pid} (${p.name})`);
  if (left.length > 0) throw new Error(`${what} left processes behind: ${left.join(", ")}`);
}

async function idleAgent(ctx: BenchContext, agent: BrowserAgent): Promise<Sample> {
  await waitForFocusedSpare(agent);
  return measure(ctx, `${MARKER_VARIABLE}=${agent.dataDir}`, [agent.process.pid], agent.process.pid);
}

/**
 * B8: memory of an idle host agent that owns a browser slot: the agent, its own Xvfb and its warm
 * spare Chromium with all its processes, RSS summed over the tree, split by part. Reported only; the
 * comparison is the same Xvfb and the same Chromium (same flags) started bare, without an agent.
 */
export async function b8IdleAgentMemory(ctx: BenchContext): Promise<BenchOutcome> {
  const started = performance.now();
  const { env, settings, progress } = ctx;
  const sampling = `${settings.memorySamples} samples 1 s apart after ${settings.memorySettleS} s`;

  // A fresh agent, so the figures do not depend on what ran before.
  const agent = await env.browserAgent("b8-agent");
  const fresh = await idleAgent(ctx, agent);
  progress(`B8: fresh idle agent: ${figures(fresh)}`);
  await agent.process.stop();
  assertGone("the stopped agent", fresh.pids);

  // B7's agent, idle again after its sessions, when B7 ran.
  const b7Agent = await env.startedBrowserAgent();
  let afterB7: { sample: Sample; sessions: number } | undefined;
  if (b7Agent) {
    const sessions = readFileSync(b7Agent.process.logFile, "utf8").split('"msg":"session stopped"').length - 1;
    afterB7 = { sample: await idleAgent(ctx, b7Agent), sessions };
    progress(`B8: B7's agent after ${sessions} sessions: ${figures(afterB7.sample)}`);
  }

  // The same Xvfb and Chromium without the agent.
  const { xvfb, dir } = await env.ownXvfb("b8-bare");
  const browser = await launchColdChromium({
    chromiumPath: CHROMIUM_PATH,
    display: xvfb.display,
    xauthority: xvfb.xauthority,
    baseDir: dir,
    name: "bare",
    windowSize: BROWSER_WINDOW,
    sandbox: decideSandbox().sandbox,
  });
  let bare: Sample;
  try {
    bare = await measure(ctx, `${MARKER_VARIABLE}=${dir}`, [browser.pid], undefined);
  } finally {
    await browser.stop();
    await xvfb.stop();
  }
  assertGone("the bare Chromium and Xvfb", bare.pids);
  progress(`B8: bare Xvfb + Chromium: ${figures(bare)}`);

  const samples = `${sampling}; ${fresh.chromiumProcesses} Chromium processes`;
  const metrics: Metric[] = [
    metric({
      id: "B8",
      what: "idle agent + its Xvfb + warm spare Chromium, RSS summed",
      unit: "MB",
      ours: fresh.rss.total,
      baseline: { name: "bare Xvfb + Chromium, same flags, RSS summed", value: bare.rss.total },
      samples,
    }),
    ...PARTS.map((part) =>
      metric({
        id: "B8",
        what: `of which ${part === "agent" ? "the agent (node)" : part}, RSS`,
        unit: "MB",
        ours: fresh.rss[part],
        ...(part !== "agent" && { baseline: { name: `bare ${part}, RSS`, value: bare.rss[part] } }),
        samples: part === "Chromium" ? `${fresh.chromiumProcesses} + ${bare.chromiumProcesses} processes` : sampling,
      }),
    ),
    metric({
      id: "B8",
      what: "idle agent + its Xvfb + warm spare Chromium, private dirty memory summed",
      unit: "MB",
      ours: fresh.dirty.total,
      baseline: { name: "bare Xvfb + Chromium, private dirty summed", value: bare.dirty.total },
      samples: sampling,
    }),
  ];
  if (afterB7) {
    metrics.push(
      metric({
        id: "B8",
        what: `B7's agent tree, idle again after ${afterB7.sessions} sessions, RSS summed`,
        unit: "MB",
        ours: afterB7.sample.rss.total,
        baseline: { name: "fresh idle agent tree", value: fresh.rss.total },
        samples: sampling,
      }),
    );
  }
  return {
    id: "B8",
    title: `memory of an idle agent with its own Xvfb (${BROWSER_SCREEN}) and its warm spare Chromium`,
    metrics,
    notes: [
      "A fresh agent (AGENT_XVFB, AGENT_CHROMIUM_PATH=/usr/bin/chromium, production Node settings, compile cache filled) " +
        `is measured once its warm spare holds the X focus (the end of its launch), after ${settings.memorySettleS} s ` +
        `of quiet, ${settings.memorySamples} times 1 s apart; each figure is the median. Its processes are the agent's ` +
        "tree from /proc/<pid>/task/*/children together with every process carrying its data directory's " +
        "BROWSER_INFRA_AGENT_DATA_DIR marker. (The marker alone finds only Xvfb, the Chromium browser process and its " +
        "crashpad handlers: Chromium's zygotes, GPU, utility and renderer processes overwrite their environment block " +
        "with their process title, so /proc/<pid>/environ no longer shows it; they stay in the browser's process " +
        "group.) After the agent was stopped (SIGTERM), none of the processes counted was left.",
      "RSS counts pages shared between processes (Chromium's binary and libraries, shared memory between Chromium's " +
        "processes) once in every process that maps them, so the RSS sum overstates what the tree takes. The private " +
        "dirty sum (Private_Dirty of smaps_rollup: heap, stacks, written data no other process maps) leaves the " +
        "binaries and all shared memory out, so it understates it; the tree's real cost lies between the two. PSS and " +
        "USS are not reported: both change with what else maps the same files, and other sessions' Chromiums and " +
        "Xvfbs came and went on this machine during the runs (in one smoke run the agent's Xvfb read 62 MB of USS and " +
        "the bare one, started the same way seconds later, 18 MB).",
      "Baseline: the same Xvfb (the agent's own start code, same screen) and the same Chromium (the agent's flags " +
        "and environment, a fresh profile) with no agent, measured the same way (the Chromium's tree and the marker) " +
        "once Chromium listened for DevTools. " +
        "Its difference to ours is the agent process plus whatever the warm spare's focus and handling add.",
      ...(afterB7
        ? [
            `B7's agent was measured the same way after serving B7 (${afterB7.sessions} sessions, each browser destroyed ` +
              `and a new spare launched): ${figures(afterB7.sample)}.`,
          ]
        : []),
    ],
    details: { fresh, bare, afterB7 },
    seconds: (performance.now() - started) / 1000,
  };
}
