import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { AGENT_MAIN, GATEWAY_MAIN } from "../support/processes.ts";

/**
 * Starts the process with its standard output on a pipe, waits for its
 * "listening" line, then closes the pipe's reading end, as when the log
 * collector of a deployment dies.
 */
async function startThenLoseLogReader(main: string, env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [main], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ["ignore", "pipe", "ignore"],
  });
  const exited = once(child, "exit");
  const lines = createInterface({ input: child.stdout });
  let port = 0;
  for await (const line of lines) {
    const parsed = JSON.parse(line) as { msg?: string; port?: number };
    if (parsed.msg === "listening") {
      port = Number(parsed.port);
      break;
    }
  }
  child.stdout.destroy();
  return { child, exited, port };
}

describe("process lifecycle", () => {
  it("the gateway stops on SIGTERM after its log reader went away", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "lifecycle-"));
    try {
      const { child, exited, port } = await startThenLoseLogReader(GATEWAY_MAIN, {
        DATA_DIR: dataDir,
        PORT: "0",
      });
      // Log lines now hit a closed pipe.
      for (let i = 0; i < 20; i++) await fetch(`http://127.0.0.1:${port}/healthz`);
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      const [code, signal] = await exited;
      clearTimeout(timer);
      expect({ code, signal }).toEqual({ code: 0, signal: null });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("the host agent stops on SIGTERM after its log reader went away", async () => {
    const { child, exited } = await startThenLoseLogReader(AGENT_MAIN, {
      AGENT_LISTEN: "127.0.0.1:0",
      AGENT_METRICS_LISTEN: "off",
    });
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    const [code, signal] = await exited;
    clearTimeout(timer);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
  });
});
