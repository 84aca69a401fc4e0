import { execFileSync } from "node:child_process";
import { cpus, loadavg, totalmem } from "node:os";

export interface Machine {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  node: string;
  kernel: string;
  date: string;
  commit: string;
  /** The working tree had changes not yet committed when the run started. */
  dirty: boolean;
  /** 1-minute load average when the run started and ended: other work on the machine skews ratios. */
  loadAtStart: number;
  loadAtEnd?: number;
}

function run(file: string, args: string[]): string {
  try {
    return execFileSync(file, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return "unknown";
  }
}

export function describeMachine(): Machine {
  const cpuList = cpus();
  return {
    cpuModel: cpuList[0]?.model.trim() ?? "unknown",
    cores: cpuList.length,
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    kernel: run("uname", ["-sr"]),
    date: new Date().toISOString(),
    commit: run("git", ["rev-parse", "HEAD"]),
    dirty: run("git", ["status", "--porcelain"]) !== "",
    loadAtStart: loadavg()[0] ?? 0,
  };
}

export function currentLoad(): number {
  return loadavg()[0] ?? 0;
}
