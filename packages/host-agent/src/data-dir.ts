import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { killAll, MARKER_VARIABLE } from "./browser/processes.ts";
import { browsersRoot, tmpRoot } from "./browser/profile.ts";
import { ConfigError } from "./config.ts";

const LOCK_FILE = "agent.pid";

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether the process is a host agent. A lock file outlives a SIGKILL or a reboot, and its pid may
 * belong to anything by now: only an agent counts as holding the directory.
 */
function isAgent(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("host-agent");
  } catch {
    return false;
  }
}

/** The pid in the lock file, when it names a live host agent other than this one. */
function holder(lockPath: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(lockPath, "utf8").trim());
  } catch {
    return undefined;
  }
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && running(pid) && isAgent(pid) ? pid : undefined;
}

/**
 * Creates the directory 0700, or makes an existing one 0700: it holds every browser's profile
 * (cookies, saved passwords), downloads and the display's cookie, for this user alone whatever the
 * umask. Returns the mode an existing directory had when others could enter it, in octal.
 */
function privateDirectory(path: string): string | undefined {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o077) === 0) return undefined;
  chmodSync(path, 0o700);
  return mode.toString(8);
}

/**
 * Takes the agent's data directory for this process and wipes what an earlier run left in it:
 * every process carrying the directory's marker (browsers and the Xvfb of an agent that was
 * killed without a chance to clean up) is SIGKILLed, and every browser directory deleted, with
 * the browsers' temporary directories. A
 * directory another running agent holds is refused: two agents on one directory would wipe each
 * other's sessions. Resolves with how many processes were left behind, and the mode the directory
 * had when it was open to others (it is 0700 now).
 */
export async function claimDataDir(
  dataDir: string,
): Promise<{ orphansKilled: number; tightenedFrom: string | undefined; release: () => void }> {
  const tightenedFrom = privateDirectory(dataDir);
  const lockPath = join(dataDir, LOCK_FILE);
  const other = holder(lockPath);
  if (other !== undefined) {
    throw new ConfigError(
      `AGENT_DATA_DIR ${dataDir} is in use by another host agent (pid ${other}); give each agent its own`,
    );
  }
  writeFileSync(lockPath, `${process.pid}\n`, { mode: 0o600 });
  const orphansKilled = await killAll({ marker: `${MARKER_VARIABLE}=${dataDir}` });
  rmSync(browsersRoot(dataDir), { recursive: true, force: true, maxRetries: 3 });
  rmSync(tmpRoot(dataDir), { recursive: true, force: true, maxRetries: 3 });
  mkdirSync(browsersRoot(dataDir), { mode: 0o700 });
  return {
    orphansKilled,
    tightenedFrom,
    // At exit: the lock, and the (by then empty) root of the browsers' temporary directories.
    release: () => {
      if (holder(lockPath) !== undefined) return;
      rmSync(lockPath, { force: true });
      rmSync(tmpRoot(dataDir), { recursive: true, force: true });
    },
  };
}
