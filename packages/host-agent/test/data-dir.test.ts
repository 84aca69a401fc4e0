import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MARKER_VARIABLE } from "../src/browser/processes.ts";
import { tmpRoot } from "../src/browser/profile.ts";
import { claimDataDir } from "../src/data-dir.ts";

let dataDir: string;
const children: ReturnType<typeof spawn>[] = [];

function sleeper(args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)", ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: "ignore",
  });
  children.push(child);
  return child;
}

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "data-dir-"));
});

afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(tmpRoot(dataDir), { recursive: true, force: true });
});

describe("claimDataDir", () => {
  it("takes the directory, and wipes every browser directory an earlier run left", async () => {
    mkdirSync(join(dataDir, "browsers", "old", "profile"), { recursive: true });
    mkdirSync(join(tmpRoot(dataDir), "old"), { recursive: true, mode: 0o700 });
    const { release } = await claimDataDir(dataDir);
    expect(readFileSync(join(dataDir, "agent.pid"), "utf8").trim()).toBe(String(process.pid));
    expect(existsSync(join(dataDir, "browsers", "old"))).toBe(false);
    expect(existsSync(tmpRoot(dataDir))).toBe(false);
    mkdirSync(tmpRoot(dataDir), { mode: 0o700 });
    release();
    expect(existsSync(join(dataDir, "agent.pid"))).toBe(false);
    expect(existsSync(tmpRoot(dataDir))).toBe(false);
  });

  it("kills the processes an earlier run left behind, found by the directory's marker", async () => {
    const orphan = sleeper([], { [MARKER_VARIABLE]: dataDir });
    const stranger = sleeper([], { [MARKER_VARIABLE]: `${dataDir}-other` });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const exited = once(orphan, "exit");
    const { orphansKilled, release } = await claimDataDir(dataDir);
    release();
    expect(orphansKilled).toBe(1);
    await exited;
    expect(stranger.exitCode).toBeNull();
  });

  it("refuses a directory a running host agent holds", async () => {
    const agent = sleeper(["host-agent"]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    writeFileSync(join(dataDir, "agent.pid"), `${agent.pid}\n`);
    await expect(claimDataDir(dataDir)).rejects.toThrow(/in use by another host agent/);
  });

  it("takes over a lock file whose pid now belongs to a process that is no agent", async () => {
    const other = sleeper();
    await new Promise((resolve) => setTimeout(resolve, 200));
    writeFileSync(join(dataDir, "agent.pid"), `${other.pid}\n`);
    const { release } = await claimDataDir(dataDir);
    release();
  });
});
