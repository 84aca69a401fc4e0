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
