import { chmodSync, closeSync, mkdirSync, openSync, statSync } from "node:fs";
import { join } from "node:path";
import { SECRETS_KEY_FILE } from "./proxies/secrets-key.ts";
import { sqlitePathIn } from "./store/store.ts";

const DIRECTORY_MODE = 0o700;
const FILE_MODE = 0o600;

/** A path that was open to others than its owner: its mode before and after, in octal ("755"). */
export interface Tightened {
  path: string;
  from: string;
  to: string;
}

/** Sets the mode when the path grants any bit the mode does not; absent paths are left alone. */
function tighten(path: string, mode: number): Tightened[] {
  let current: number;
  try {
    current = statSync(path).mode & 0o777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  if ((current & ~mode) === 0) return [];
  chmodSync(path, mode);
  return [{ path, from: current.toString(8), to: mode.toString(8) }];
}

/** Creates the directory (and its missing parents) 0700, or tightens an existing one to 0700. */
export function privateDirectory(path: string): Tightened[] {
  mkdirSync(path, { recursive: true, mode: DIRECTORY_MODE });
  return tighten(path, DIRECTORY_MODE);
}

/** Tightens an existing file to 0600. */
export function privateFile(path: string): Tightened[] {
  return tighten(path, FILE_MODE);
}

/**
 * DATA_DIR holds the SQLite store (API key hashes, proxy hosts and usernames, sealed proxy
 * secrets) and secrets.key, so only the gateway's user may read them, whatever the umask: the
 * directory is 0700 and the files 0600. The database file is created here, empty and 0600, before
 * SQLite opens it (it makes a new database in an empty file), because SQLite creates its own files
 * 0644 less the umask and gives the -wal and -shm files the database file's mode. What an older
 * version, another umask or an operator left looser is tightened and returned, for the caller to
 * say so.
 */
export function prepareDataDir(dataDir: string): Tightened[] {
  const tightened = privateDirectory(dataDir);
  const database = sqlitePathIn(dataDir);
  closeSync(openSync(database, "a", FILE_MODE));
  for (const path of [database, `${database}-wal`, `${database}-shm`, join(dataDir, SECRETS_KEY_FILE)]) {
    tightened.push(...privateFile(path));
  }
  return tightened;
}
