import pg from "pg";
import { PostgresListener } from "./postgres-listener.ts";
import { PostgresMembership } from "./postgres-membership.ts";
import {
  type ChangeWatch,
  type Membership,
  type SqlClient,
  StoreUnavailableError,
  UniqueViolationError,
} from "./sql-client.ts";

// Classes of SQLSTATE that mean "the database is not there right now", not "your query is wrong":
// 08 connection exception, 53 insufficient resources, 57 operator intervention (e.g. shutdown), 58 system error.
const UNAVAILABLE_SQLSTATE = /^(08|53|57|58)/;
const UNAVAILABLE_NODE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EHOSTUNREACH",
]);

function mapError(error: unknown): Error {
  const err = error as { code?: string; message?: string };
  if (err.code === "23505") return new UniqueViolationError(err.message ?? "", { cause: error });
  const connectionLost =
    (err.code !== undefined && (UNAVAILABLE_SQLSTATE.test(err.code) || UNAVAILABLE_NODE_CODES.has(err.code))) ||
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
      err.message ?? "",
    );
  if (connectionLost) return new StoreUnavailableError(`postgres: ${err.message}`, { cause: error });
  return error as Error;
}

async function run<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw mapError(error);
  }
}

const DEFAULT_CONNECT_TIMEOUT_MS = 2_000;

type Queryable = Pick<pg.PoolClient, "query">;

function clientOver(queryable: Queryable, transaction: SqlClient["transaction"]): SqlClient {
  return {
    dialect: "postgres",
    query: async <Row>(sql: string, params: readonly unknown[] = []) =>
      run(async () => (await queryable.query(sql, params as unknown[])).rows as Row[]),
    execute: async (sql, params = []) =>
      run(async () => (await queryable.query(sql, params as unknown[])).rowCount ?? 0),
    transaction,
    close: async () => {},
  };
}

export interface PostgresOptions {
  connectionString: string;
  maxConnections?: number;
  /** How long to wait for a connection before reporting the store unavailable. */
  connectTimeoutMs?: number;
}

export class PostgresClient implements SqlClient {
  readonly dialect = "postgres" as const;
  readonly #pool: pg.Pool;
  readonly #plain: SqlClient;
  readonly #options: PostgresOptions;
  readonly #listeners: PostgresListener[] = [];
  readonly #memberships: PostgresMembership[] = [];

  constructor(options: PostgresOptions) {
    this.#options = options;
    this.#pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    });
    // An idle client whose server went away emits here; without a listener the process would crash.
    this.#pool.on("error", () => {});
    this.#plain = clientOver(this.#pool, (fn) => this.transaction(fn));
  }

  query<Row>(sql: string, params?: readonly unknown[]): Promise<Row[]> {
    return this.#plain.query<Row>(sql, params);
  }

  execute(sql: string, params?: readonly unknown[]): Promise<number> {
    return this.#plain.execute(sql, params);
  }

  async transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
    const connection = await run(() => this.#pool.connect());
    const tx = clientOver(connection, (inner) => inner(tx));
    let broken: unknown;
    try {
      await tx.execute("BEGIN");
      const result = await fn(tx);
      await tx.execute("COMMIT");
      return result;
    } catch (error) {
      broken = error;
      await connection.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      // A connection that failed mid-transaction may be dead; do not hand it out again.
      connection.release(broken instanceof StoreUnavailableError ? (broken as Error) : undefined);
    }
  }

  /** Opens one more connection, kept for LISTEN on this channel until close(). */
  watch(channel: string): ChangeWatch {
    const listener = new PostgresListener(
      this.#options.connectionString,
      channel,
      this.#options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    );
    this.#listeners.push(listener);
    return listener;
  }

  /** Opens one more connection, which holds this process's membership of `group` until close(). */
  join(group: number): Membership {
    const membership = new PostgresMembership(
      this.#options.connectionString,
      group,
      this.#options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      { query: async (sql, params) => ({ rows: await this.query<{ key: number }>(sql, params) }) },
    );
    this.#memberships.push(membership);
    return membership;
  }

  async close(): Promise<void> {
    await Promise.all(this.#memberships.map((membership) => membership.close()));
    await Promise.all(this.#listeners.map((listener) => listener.close()));
    await this.#pool.end();
  }
}
