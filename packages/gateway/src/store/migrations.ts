import type { SqlClient } from "./sql-client.ts";

/**
 * Schema history, oldest first; a step is never edited once released, only
 * followed by another. The SQL is the subset SQLite and PostgreSQL share:
 * TEXT ids, ISO-8601 UTC timestamps as TEXT, INTEGER 0/1 booleans.
 */
export const MIGRATIONS: readonly { version: number; name: string; statements: readonly string[] }[] = [
  {
    version: 1,
    name: "organizations, api keys, browser sessions",
    statements: [
      `CREATE TABLE organizations (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL
      )`,
      `CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        organization_id TEXT NOT NULL REFERENCES organizations (id),
        name TEXT NOT NULL,
        key_hash TEXT NOT NULL UNIQUE,
        prefix TEXT NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      )`,
      `CREATE TABLE browser_sessions (
        id TEXT PRIMARY KEY,
        organization_id TEXT NOT NULL REFERENCES organizations (id),
        name TEXT,
        host_address TEXT NOT NULL,
        created_at TEXT NOT NULL,
        deleted_at TEXT
      )`,
      // Names identify active sessions only, so a deleted session's name can be reused.
      `CREATE UNIQUE INDEX browser_sessions_active_name
        ON browser_sessions (organization_id, name) WHERE deleted_at IS NULL AND name IS NOT NULL`,
    ],
  },
  {
    version: 2,
    name: "proxies",
    statements: [
      // config holds only the public part of a proxy's configuration; custom proxy secrets live
      // sealed (AES-256-GCM) in their own columns. name_folded and host exist for the list filters.
      `CREATE TABLE proxies (
        id TEXT PRIMARY KEY,
        organization_id TEXT NOT NULL REFERENCES organizations (id),
        name TEXT NOT NULL,
        name_folded TEXT NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('datacenter', 'isp', 'residential', 'mobile', 'custom')),
        protocol TEXT NOT NULL CHECK (protocol IN ('http', 'https')),
        status TEXT CHECK (status IN ('available', 'unavailable')),
        ip_address TEXT,
        last_checked TEXT,
        bypass_hosts TEXT NOT NULL,
        config TEXT NOT NULL,
        host TEXT,
        password_sealed TEXT,
        ca_bundle_sealed TEXT,
        created_at TEXT NOT NULL,
        deleted_at TEXT
      )`,
      "CREATE INDEX proxies_by_organization ON proxies (organization_id, created_at, id)",
    ],
  },
  {
    version: 3,
    name: "hosts and browser session fields",
    statements: [
      // One row per host agent. session_id is the session that holds the host: one column, so a
      // host can never hold two sessions; the unique index keeps one session from holding two hosts.
      `CREATE TABLE hosts (
        address TEXT PRIMARY KEY,
        health TEXT NOT NULL CHECK (health IN ('unknown', 'serving', 'not_serving', 'unreachable')),
        health_detail TEXT,
        checked_at TEXT,
        agent_version TEXT,
        display TEXT,
        screen_width INTEGER,
        screen_height INTEGER,
        cdp_ws_url TEXT,
        session_id TEXT REFERENCES browser_sessions (id),
        added_at TEXT NOT NULL
      )`,
      "CREATE UNIQUE INDEX hosts_by_session ON hosts (session_id) WHERE session_id IS NOT NULL",
      "ALTER TABLE browser_sessions ADD COLUMN timeout_seconds INTEGER NOT NULL DEFAULT 60",
      "ALTER TABLE browser_sessions ADD COLUMN headless INTEGER NOT NULL DEFAULT 0",
      "ALTER TABLE browser_sessions ADD COLUMN proxy_id TEXT",
      "ALTER TABLE browser_sessions ADD COLUMN tags TEXT",
      "ALTER TABLE browser_sessions ADD COLUMN viewport_width INTEGER",
      "ALTER TABLE browser_sessions ADD COLUMN viewport_height INTEGER",
      "ALTER TABLE browser_sessions ADD COLUMN cdp_ws_url TEXT",
      "ALTER TABLE browser_sessions ADD COLUMN last_active_at TEXT",
      // last_active_at + timeout_seconds, kept as a timestamp so that finding idle sessions is one
      // indexed comparison of ISO-8601 strings on both engines. NULL (sessions from before this step) never idles out.
      "ALTER TABLE browser_sessions ADD COLUMN idle_deadline TEXT",
      "CREATE INDEX browser_sessions_idle ON browser_sessions (idle_deadline) WHERE deleted_at IS NULL",
      "CREATE INDEX browser_sessions_by_organization ON browser_sessions (organization_id, created_at, id)",
    ],
  },
  {
    version: 4,
    name: "a browser per session: stops confirmed by the host, end reasons",
    statements: [
      // The session a host is being stopped for: the host takes no new session until its agent
      // confirmed the stop (its browser and files are gone), however long it is unreachable.
      "ALTER TABLE hosts ADD COLUMN stopping_session_id TEXT",
      // hosts.cdp_ws_url is no longer written (agents report a DevTools URL per session); it stays so
      // that replicas of the previous version keep working during a rolling upgrade.
      "ALTER TABLE browser_sessions ADD COLUMN end_reason TEXT",
      // The run of the host agent that started the session's browser; NULL until it started.
      "ALTER TABLE browser_sessions ADD COLUMN agent_instance TEXT",
    ],
  },
];

// Any constant shared by every replica; it only has to differ from other users of advisory locks.
const MIGRATION_LOCK_ID = 727_001;

/**
 * Brings the schema up to date. Two replicas starting at once serialize on a
 * database lock (an advisory lock on PostgreSQL, BEGIN IMMEDIATE on SQLite),
 * so each step runs exactly once.
 */
export async function migrate(sql: SqlClient): Promise<number[]> {
  return sql.transaction(async (tx) => {
    if (tx.dialect === "postgres") await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_ID]);
    await tx.execute(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
    );
    const applied = new Set(
      (await tx.query<{ version: number }>("SELECT version FROM schema_migrations")).map((row) => Number(row.version)),
    );
    const ran: number[] = [];
    for (const migration of MIGRATIONS) {
      if (applied.has(migration.version)) continue;
      for (const statement of migration.statements) await tx.execute(statement);
      await tx.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
        migration.version,
        migration.name,
        new Date().toISOString(),
      ]);
      ran.push(migration.version);
    }
    return ran;
  });
}
