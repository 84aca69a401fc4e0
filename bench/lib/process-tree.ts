import { readdirSync, readFileSync } from "node:fs";

/** Memory of one process, from /proc. */
export interface ProcessMemory {
  pid: number;
  /** /proc/<pid>/comm: "node", "Xvfb", "chromium", … */
  name: string;
  /** VmRSS: resident pages, shared ones counted in every process that maps them. */
  rssBytes: number;
  /**
   * Private_Dirty from smaps_rollup: pages the process wrote that no other process maps (heap,
   * stacks, written data). Unlike PSS or Private_Clean it does not depend on what else runs on the
   * machine: another Chromium or Xvfb maps the same binary and libraries, which turns their clean
   * pages from private into shared.
   */
  privateDirtyBytes: number;
}

function childrenOf(pid: number): number[] {
  const children: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return children;
  }
  for (const task of tasks) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/)) {
        if (child) children.push(Number(child));
      }
    } catch {
      // The thread ended meanwhile.
    }
  }
  return children;
}

/** `root` and every process below it, from the kernel's children lists. */
export function processTree(root: number): number[] {
  const seen = new Set<number>();
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    queue.push(...childrenOf(pid));
  }
  return [...seen];
}

/** Every live process whose environment holds `entry` (NAME=value): readable as root or as their owner. */
export function processesWithEnvironment(entry: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(entry)) pids.push(pid);
    } catch {
      // Gone, or not ours to read.
    }
  }
  return pids;
}

function kilobytes(text: string, field: string): number | undefined {
  const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(text);
  return match ? Number(match[1]) * 1024 : undefined;
}

/** RSS and private dirty memory of each process still alive; zombies and processes gone meanwhile are left out. */
export function memoryOf(pids: readonly number[]): ProcessMemory[] {
  const result: ProcessMemory[] = [];
  for (const pid of pids) {
    try {
      const rss = kilobytes(readFileSync(`/proc/${pid}/status`, "utf8"), "VmRSS");
      // A zombie has no VmRSS.
      if (rss === undefined) continue;
      const privateDirty = kilobytes(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"), "Private_Dirty") ?? 0;
      const name = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
      result.push({ pid, name, rssBytes: rss, privateDirtyBytes: privateDirty });
    } catch {
      // Gone meanwhile.
    }
  }
  return result;
}
