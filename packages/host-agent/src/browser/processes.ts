import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Every process the agent starts (Xvfb, each Chromium) carries this variable, set to the agent's
 * data directory. A later agent on the same data directory finds what an earlier one left behind
 * by it, even after a SIGKILL gave no chance to clean up, and a browser's own processes are found
 * by its directory the same way. Chromium's helpers (zygotes, renderers, GPU process) inherit it
 * but write their process titles over it, so /proc shows it only for the browser process and its
 * crash handler; each browser leads a process group of its own, and the helpers are found by that.
 */
export const MARKER_VARIABLE = "BROWSER_INFRA_AGENT_DATA_DIR";
/** Set to the browser's own directory on each Chromium, so one browser's processes are told from another's. */
export const BROWSER_MARKER_VARIABLE = "BROWSER_INFRA_BROWSER_DIR";

/** What /proc says of one process. */
interface ProcessEntry {
  pid: number;
  pgid: number;
  /** Undefined when the environment cannot be read (another user's process, or one that is not dumpable). */
  environ: string[] | undefined;
}

function readEntry(pid: number): ProcessEntry | undefined {
  try {
    // Field 5 of stat is the process group; the command name (field 2) may hold spaces and parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // A zombie has ended already; only its parent's wait() removes it.
    if (fields[0] === "Z") return undefined;
    const pgid = Number(fields[2]);
    let environ: string[] | undefined;
    try {
      environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
    } catch {
      environ = undefined;
    }
    return { pid, pgid, environ };
  } catch {
    // Gone meanwhile.
    return undefined;
  }
}

function allProcesses(): ProcessEntry[] {
  const entries: ProcessEntry[] = [];
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const entry = readEntry(pid);
    if (entry) entries.push(entry);
  }
  return entries;
}

/** What to look for: processes carrying `marker` (NAME=value) in their environment, or in one of `groups`. */
export interface ProcessMatch {
  marker?: string;
  groups?: readonly number[];
}

/**
 * The pids matching, excluding this process: those carrying the marker, those in one of the
 * groups, and those in the group of a marked process that leads its group (a browser, whose
 * helpers hide the marker). A marked process in someone else's group (Xvfb, in the agent's) does
 * not bring that group in.
 */
function findProcesses(match: ProcessMatch): number[] {
  const processes = allProcesses();
  const marked = (entry: ProcessEntry) =>
    match.marker !== undefined && (entry.environ?.includes(match.marker) ?? false);
  const groups = new Set(match.groups ?? []);
  for (const entry of processes) if (entry.pid === entry.pgid && marked(entry)) groups.add(entry.pgid);
  return processes.filter((entry) => groups.has(entry.pgid) || marked(entry)).map((entry) => entry.pid);
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone, which is what was wanted.
  }
}

/**
 * SIGKILLs every matching process, again until none is left or `timeoutMs` passed; resolves with
 * how many it killed. Processes that may still fork are caught by the repeated scans.
 */
export async function killAll(match: ProcessMatch, timeoutMs = 5_000): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  const killed = new Set<number>();
  for (;;) {
    const pids = findProcesses(match);
    if (pids.length === 0) return killed.size;
    if (performance.now() > deadline) {
      throw new Error(`processes ${pids.join(", ")} survived SIGKILL for ${timeoutMs} ms`);
    }
    for (const pid of pids) {
      signal(pid, "SIGKILL");
      killed.add(pid);
    }
    await sleep(20);
  }
}
