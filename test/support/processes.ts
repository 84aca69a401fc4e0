import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { LOG_FLUSH_INTERVAL_MS } from "../../packages/gateway/src/logger.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const AGENT_MAIN = `${ROOT}packages/host-agent/src/main.ts`;
export const GATEWAY_MAIN = `${ROOT}packages/gateway/src/main.ts`;
export const CLI_MAIN = `${ROOT}packages/gateway/src/cli/main.ts`;

export interface RunningProcess {
  readonly child: ChildProcess;
  /** Every line the process wrote to stdout and stderr so far. */
  readonly lines: string[];
  /**
   * Every line, once the process has had time to write out its log buffer (the loggers flush every
   * LOG_FLUSH_INTERVAL_MS): what a test that asserts on the absence of a line must read.
   */
  settledLines(): Promise<string[]>;
  /** Resolves with the first JSON log line for which `match` is true. */
  waitForLog(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Sends the signal and waits for the exit; SIGKILL after 10 s. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts a TypeScript entry point as its own OS process on this Node (24, type stripping). */
export function startProcess(main: string, env: NodeJS.ProcessEnv, args: string[] = []): RunningProcess {
  const child = spawn(process.execPath, [main, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const waiters = new Set<{
    match: (line: Record<string, unknown>) => boolean;
    resolve: (line: Record<string, unknown>) => void;
  }>();
  const take = (line: string) => {
    if (!line) return;
    lines.push(line);
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(line);
    } catch {
      return;
    }
    for (const waiter of waiters) {
      if (waiter.match(parsed)) {
        waiters.delete(waiter);
        waiter.resolve(parsed);
      }
    }
  };
  // A log block can arrive in several reads: a line ends at its newline, not at the end of a chunk.
  const partial = { stdout: "", stderr: "" };
  const onData = (stream: keyof typeof partial) => (chunk: Buffer) => {
    const complete = (partial[stream] + chunk.toString("utf8")).split("\n");
    partial[stream] = complete.pop() ?? "";
    for (const line of complete) take(line);
  };
  const onEnd = (stream: keyof typeof partial) => () => take(partial[stream]);
  child.stdout?.on("data", onData("stdout")).on("end", onEnd("stdout"));
  child.stderr?.on("data", onData("stderr")).on("end", onEnd("stderr"));
  // "close", not "exit": only then has everything the process wrote, its exit handlers' lines included, been read.
  const exited = once(child, "close").then(([code]) => code as number | null);

  return {
    child,
    lines,
    settledLines: async () => {
      await sleep(3 * LOG_FLUSH_INTERVAL_MS);
      return lines;
    },
    waitForLog: (match, timeoutMs = 15_000) => {
      for (const line of lines) {
        try {
          const parsed = JSON.parse(line);
          if (match(parsed)) return Promise.resolve(parsed);
        } catch {}
      }
      return new Promise((resolve, reject) => {
        const waiter = { match, resolve };
        waiters.add(waiter);
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`${main}: no matching log line within ${timeoutMs} ms; output:\n${lines.join("\n")}`));
        }, timeoutMs);
        void exited.then((code) => {
          if (!waiters.has(waiter)) return;
          clearTimeout(timer);
          waiters.delete(waiter);
          reject(new Error(`${main} exited with ${code}; output:\n${lines.join("\n")}`));
        });
      });
    },
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

export interface AgentProcess extends RunningProcess {
  /** host:port, or unix:/path for an agent on a Unix socket. */
  address: string;
  /** NaN for an agent on a Unix socket. */
  port: number;
  /** The agent's Prometheus endpoint; undefined when AGENT_METRICS_LISTEN is off. */
  metricsUrl: string | undefined;
}

/**
 * Starts a host agent with a data directory of its own (removed when it stops, unless the test
 * gave AGENT_DATA_DIR). Without a browser unless the test asks for one with AGENT_CHROMIUM_PATH:
 * most tests are about keys and files, and a Chromium (with its warm spare) per agent would make
 * them slow.
 */
export async function startAgent(env: NodeJS.ProcessEnv = {}): Promise<AgentProcess> {
  const ownDataDir = env.AGENT_DATA_DIR ? undefined : mkdtempSync(join(tmpdir(), "host-agent-"));
  // A free metrics port each, or agents started side by side would all want 9464.
  const agent = startProcess(AGENT_MAIN, {
    AGENT_LISTEN: "127.0.0.1:0",
    AGENT_METRICS_LISTEN: "127.0.0.1:0",
    AGENT_CHROMIUM_PATH: "none",
    LOG_LEVEL: "info",
    ...(ownDataDir && { AGENT_DATA_DIR: ownDataDir }),
    ...env,
  });
  if (ownDataDir) void once(agent.child, "close").then(() => rmSync(ownDataDir, { recursive: true, force: true }));
  const line = await agent.waitForLog((l) => l.msg === "listening");
  const port = Number(line.port);
  const metricsUrl = line.metricsPort ? `http://127.0.0.1:${line.metricsPort}/metrics` : undefined;
  // An agent on a Unix socket has no port; gateways dial it by its unix: address.
  const address = line.port === undefined ? String(line.listen) : `127.0.0.1:${port}`;
  return Object.assign(agent, { port, address, metricsUrl });
}

export interface GatewayProcess extends RunningProcess {
  url: string;
  port: number;
}

export async function startGatewayProcess(env: NodeJS.ProcessEnv): Promise<GatewayProcess> {
  const gateway = startProcess(GATEWAY_MAIN, { PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", ...env });
  const line = await gateway.waitForLog((l) => l.msg === "listening");
  const port = Number(line.port);
  return Object.assign(gateway, { port, url: `http://127.0.0.1:${port}` });
}

/** Runs the admin CLI to completion and returns its stdout. */
export async function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(process.execPath, [CLI_MAIN, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const [code] = await once(child, "exit");
  if (code !== 0) throw new Error(`cli ${args.join(" ")} exited with ${code}: ${stderr}`);
  return stdout;
}
