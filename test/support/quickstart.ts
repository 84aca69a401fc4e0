import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Kernel from "@onkernel/sdk";

const QUICKSTART = fileURLToPath(new URL("../../scripts/quickstart.ts", import.meta.url));
export const QUICKSTART_READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;

/** `npm start` as a user runs it, in a data directory of its own, and the official client for what it printed. */
export interface Quickstart {
  child: ChildProcess;
  dataDir: string;
  kernel: Kernel;
  /** Everything it printed so far. */
  output(): string;
  /**
   * Stops it as Ctrl-C does (SIGINT to its process group, so its agents end their Xvfb and browsers),
   * SIGKILL after 15 s, and deletes its data directory.
   */
  stop(): Promise<void>;
}

/** Starts scripts/quickstart.ts with `env` (QUICKSTART_BROWSERS, PROXY_ALLOWED_NETWORKS…) and waits until it is ready. */
export async function startQuickstart(name: string, env: NodeJS.ProcessEnv): Promise<Quickstart> {
  const dataDir = mkdtempSync(join(tmpdir(), `${name}-`));
  const child = spawn(process.execPath, [QUICKSTART], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group, so that kill() ends every process it started.
    detached: true,
  });
  let output = "";
  for (const stream of [child.stdout, child.stderr]) {
    stream?.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
  }
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      const pid = child.pid;
      process.kill(-pid, "SIGINT");
      const timer = setTimeout(() => process.kill(-pid, "SIGKILL"), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + QUICKSTART_READY_TIMEOUT_MS;
  while (!output.includes("Ctrl-C stops everything.")) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error(`the quick start did not come up:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const baseURL = /export KERNEL_BASE_URL=(\S+)/.exec(output)?.[1];
  const apiKey = /export KERNEL_API_KEY=(\S+)/.exec(output)?.[1];
  return { child, dataDir, kernel: new Kernel({ baseURL, apiKey, maxRetries: 0 }), output: () => output, stop };
}
