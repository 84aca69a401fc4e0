import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, openSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

export interface ServerProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  readonly url: string;
  readonly logFile: string;
  /** How the process ended, if it has: "code 1", "signal SIGTERM"; undefined while it runs. */
  exit(): string | undefined;
  /** Stops with SIGTERM (so a --cpu-prof profile gets written), SIGKILL after 10 s. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** When set, the process runs under `node --cpu-prof` and writes its profile here on exit. */
  profileDir?: string;
  timeoutMs?: number;
}

const LISTEN_POLL_MS = 25;

/**
 * Starts a TypeScript entry point on this Node as its own OS process and waits for its
 * `{"msg":"listening","port":…}` line. Output goes straight to a file rather than through a
 * pipe into this process: a pipe would make the runner parse every request log line, taking
 * CPU from the measured processes on a 2-core machine, and keep them all in memory.
 */
export async function startServerProcess(
  name: string,
  main: string,
  env: NodeJS.ProcessEnv,
  logFile: string,
  options: StartOptions = {},
): Promise<ServerProcess> {
  const fd = openSync(logFile, "a");
  const execArgv = options.profileDir
    ? ["--cpu-prof", `--cpu-prof-dir=${options.profileDir}`, `--cpu-prof-name=${name}.${Date.now()}.cpuprofile`]
    : [];
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [...execArgv, main], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ["ignore", fd, fd],
    });
  } finally {
    closeSync(fd);
  }
  const exited = once(child, "exit");
  let exitCode: unknown;
  let exitText: string | undefined;
  void exited.then(([code, signal]) => {
    exitCode = code ?? signal;
    exitText = code === null ? `signal ${signal}` : `code ${code}`;
  });

  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  let port: number | undefined;
  while (port === undefined) {
    if (exitCode !== undefined) throw new Error(`${name} exited (${exitCode}) before listening; see ${logFile}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`${name} did not log "listening" in time; see ${logFile}`);
    }
    port = listeningPort(readFileSync(logFile, "utf8"));
    if (port === undefined) await sleep(LISTEN_POLL_MS);
  }

  return {
    name,
    child,
    pid: child.pid as number,
    port,
    url: `http://127.0.0.1:${port}`,
    logFile,
    exit: () => exitText,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      try {
        await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

function listeningPort(log: string): number | undefined {
  const port = listeningLine(log)?.port;
  return typeof port === "number" ? port : undefined;
}

function listeningLine(log: string): Record<string, unknown> | undefined {
  for (const line of log.split("\n")) {
    if (!line.includes('"listening"')) continue;
    try {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (parsed.msg === "listening" && typeof parsed.port === "number") return parsed;
    } catch {}
  }
  return undefined;
}

/** The fields of a started process's `{"msg":"listening",…}` line (the agent names its display there). */
export function listeningRecord(logFile: string): Record<string, unknown> | undefined {
  return listeningLine(readFileSync(logFile, "utf8"));
}

/** VmHWM: the kernel's own record of the process's peak resident set, so no sample can miss a spike. */
export function peakRssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
  if (!match) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}
