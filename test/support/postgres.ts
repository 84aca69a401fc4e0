import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "./ports.ts";

/** Finds PostgreSQL's server binaries: PATH first, then Debian's versioned folders. */
function binDir(): string {
  try {
    const dir = execFileSync("pg_config", ["--bindir"], { encoding: "utf8" }).trim();
    if (existsSync(join(dir, "initdb"))) return dir;
  } catch {}
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) {
    const dir = join(root, version, "bin");
    if (existsSync(join(dir, "initdb"))) return dir;
  }
  throw new Error(
    "PostgreSQL server binaries not found: install them (apt-get install postgresql) — .ci/run does this",
  );
}

export interface PostgresServer {
  /** Connection string of the `postgres` database, for administration. */
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Kills the server the way a crash would, keeping its data, and starts it again after `downMs` (default 0). */
  restart(options?: { downMs?: number }): Promise<void>;
}

/**
 * A throwaway PostgreSQL server in a temporary folder, on a free loopback port,
 * trusting local connections. As root it runs as the `postgres` user, because
 * initdb refuses root.
 */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = binDir();
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), "pg-test-"));
  const dataDir = join(dir, "data");
  if (asRoot) execFileSync("chown", ["postgres:postgres", dir]);
  const run = (command: string, args: string[]) => {
    const file = join(bin, command);
    return asRoot
      ? execFileSync("runuser", ["-u", "postgres", "--", file, ...args], { stdio: "pipe" })
      : execFileSync(file, args, { stdio: "pipe" });
  };
  run("initdb", ["-D", dataDir, "--auth=trust", "--username=postgres", "--no-sync", "-E", "UTF8"]);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  const start = () => run("pg_ctl", ["-D", dataDir, "-o", options, "-l", join(dir, "server.log"), "-w", "start"]);
  start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    port,
    restart: async ({ downMs = 0 } = {}) => {
      run("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]);
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      start();
    },
    stop: async () => {
      try {
        run("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** A fresh, empty database on the server, so test files never see each other's rows. */
export async function createDatabase(adminUrl: string, prefix = "t"): Promise<string> {
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
