import { type BenchContext, type BenchOutcome, metric } from "./lib/bench.ts";
import { alternateThroughput } from "./lib/measure.ts";
import { createProxies, renameTarget } from "./lib/proxies.ts";

/**
 * B4: PATCH /proxies/{id} (rename) throughput on SQLite and on PostgreSQL, 32 connections spread over
 * 64 proxies, against a bare Express route that parses the same JSON body and answers. The three
 * sides alternate round by round and share one baseline.
 */
export async function b4ProxyRenameThroughput(ctx: BenchContext): Promise<BenchOutcome> {
  const started = performance.now();
  const { env, settings, progress } = ctx;
  const connections = settings.connections;
  const sqlite = await env.tenant("sqlite");
  const postgres = await env.tenant("postgres");
  const sqliteGateway = await env.gateway("gateway-sqlite", "sqlite");
  const postgresGateway = await env.gateway("gateway-postgres-1", "postgres");
  const baseline = await env.baseline("express-rename");
  const floor = await env.postgresFloor();
  const sqliteFloor = await env.sqliteFloor();
  progress("B4: creating proxies through the API");
  const sqliteIds = await createProxies(sqliteGateway, sqlite.apiKey);
  const postgresIds = await createProxies(postgresGateway, postgres.apiKey);

  const results = await alternateThroughput(ctx, "B4", [
    {
      name: "express",
      spec: (durationS) => ({ targets: [renameTarget(baseline.url, sqliteIds, connections)], durationS }),
    },
    {
      name: "sqlite",
      spec: (durationS) => ({
        targets: [renameTarget(sqliteGateway.url, sqliteIds, connections, sqlite.apiKey)],
        durationS,
      }),
    },
    {
      name: "sqlite floor",
      spec: (durationS) => ({ targets: [renameTarget(sqliteFloor.url, sqliteIds, connections)], durationS }),
    },
    {
      name: "postgres",
      spec: (durationS) => ({
        targets: [renameTarget(postgresGateway.url, postgresIds, connections, postgres.apiKey)],
        durationS,
      }),
    },
    {
      name: "postgres floor",
      spec: (durationS) => ({ targets: [renameTarget(floor.url, postgresIds, connections)], durationS }),
    },
  ]);
  const base = results.express;
  const onSqlite = results.sqlite;
  const onPostgres = results.postgres;
  const postgresFloor = results["postgres floor"];
  const onSqliteFloor = results["sqlite floor"];
  if (!base || !onSqlite || !onPostgres || !postgresFloor || !onSqliteFloor) {
    throw new Error("B4: a side produced no result");
  }
  const baselineRef = { name: "bare Express JSON route", value: Math.round(base.median) };

  return {
    id: "B4",
    title: "PATCH /proxies/{id} throughput on SQLite and on PostgreSQL",
    metrics: [
      metric({
        id: "B4",
        what: `rename on SQLite, ${connections} conns`,
        unit: "req/s",
        ours: Math.round(onSqlite.median),
        baseline: baselineRef,
        target: { on: "ratio", op: ">=", value: 0.5 },
        samples: `${onSqlite.requests} + ${base.requests} requests`,
      }),
      metric({
        id: "B4",
        what: "floor: bare Express + one UPDATE via node:sqlite",
        unit: "req/s",
        ours: Math.round(onSqliteFloor.median),
        baseline: baselineRef,
        samples: `${onSqliteFloor.requests} + ${base.requests} requests`,
      }),
      metric({
        id: "B4",
        what: `rename on PostgreSQL, ${connections} conns`,
        unit: "req/s",
        ours: Math.round(onPostgres.median),
        baseline: baselineRef,
        target: { on: "ratio", op: ">=", value: 0.35 },
        samples: `${onPostgres.requests} + ${base.requests} requests`,
      }),
      metric({
        id: "B4",
        what: "floor: bare Express + one UPDATE via pg",
        unit: "req/s",
        ours: Math.round(postgresFloor.median),
        baseline: baselineRef,
        samples: `${postgresFloor.requests} + ${base.requests} requests`,
      }),
    ],
    notes: [
      `${sqliteIds.length} proxies per store, renamed in turn with a new name each time; ${settings.throughputRounds} ` +
        `alternating round(s) of ${settings.throughputRoundS} s per side after a ${settings.throughputWarmupS} s warm-up; ` +
        `median round. Rounds (req/s): SQLite ${onSqlite.rounds.join(", ")}; PostgreSQL ${onPostgres.rounds.join(", ")}; ` +
        `Express ${base.rounds.join(", ")}; SQLite floor ${onSqliteFloor.rounds.join(", ")}; PostgreSQL floor ` +
        `${postgresFloor.rounds.join(", ")}.`,
      "The floor rows are the bare Express route plus the single UPDATE … RETURNING a rename needs, on the same " +
        "database (bench/baselines/express-rename-*.ts): no auth lookup, validation, logging or metrics. The gateway " +
        "also looks up the API key, one more statement (on PostgreSQL one more round trip) per request.",
      "PostgreSQL is a throwaway local server (fsync off, as in the tests): the numbers show the gateway's cost, not a disk's.",
    ],
    details: { sqlite: onSqlite, sqliteFloor: onSqliteFloor, postgres: onPostgres, postgresFloor, baseline: base },
    seconds: (performance.now() - started) / 1000,
  };
}
