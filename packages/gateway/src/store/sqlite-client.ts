import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { type ChangeWatch, type SqlClient, StoreUnavailableError, UniqueViolationError } from "./sql-client.ts";

function toSqlite(sql: string): string {
  return sql.replace(/\$(\d+)/g, "?$1");
}

function bindable(params: readonly unknown[]): SQLInputValue[] {
  return params.map((value) => {
    if (value === undefined) return null;
    if (typeof value === "boolean") return value ? 1 : 0;
    return value as SQLInputValue;
  });
}

function mapError(error: unknown): Error {
  const err = error as { code?: string; errcode?: number; message?: string };
  // 2067 SQLITE_CONSTRAINT_UNIQUE, 1555 SQLITE_CONSTRAINT_PRIMARYKEY
  if (err.errcode === 2067 || err.errcode === 1555)
    return new UniqueViolationError(err.message ?? "", { cause: error });
  // 5 SQLITE_BUSY, 10 SQLITE_IOERR, 13 SQLITE_FULL, 14 SQLITE_CANTOPEN
  if (err.errcode !== undefined && [5, 10, 13, 14].includes(err.errcode & 0xff)) {
    return new StoreUnavailableError(`sqlite: ${err.message}`, { cause: error });
  }
  return error as Error;
}

/**
 * node:sqlite is synchronous, so one connection serves the process; a lock
 * keeps other callers out while an async transaction is open.
 */
export class SqliteClient implements SqlClient {
  readonly dialect = "sqlite" as const;
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();
  #lock: Promise<void> = Promise.resolve();

  constructor(path: string) {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    this.#db = new DatabaseSync(path);
    // WAL with synchronous=NORMAL: a commit is not fsynced, only checkpoints are. The database
    // stays consistent; a power cut (not a process crash) may lose the last commits.
    this.#db.exec(
      "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;",
    );
  }

  #statement(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(toSqlite(sql));
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  #run<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      throw mapError(error);
    }
  }

  /** Waits until no transaction holds the connection; the caller then runs synchronously. */
  async #whenUnlocked(): Promise<void> {
    for (;;) {
      const current = this.#lock;
      await current;
      if (current === this.#lock) return;
    }
  }

  async query<Row>(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    await this.#whenUnlocked();
    return this.#queryNow<Row>(sql, params);
  }

  #queryNow<Row>(sql: string, params: readonly unknown[]): Row[] {
    return this.#run(() => this.#statement(sql).all(...bindable(params)) as Row[]);
  }

  async execute(sql: string, params: readonly unknown[] = []): Promise<number> {
    await this.#whenUnlocked();
    return this.#executeNow(sql, params);
  }

  #executeNow(sql: string, params: readonly unknown[]): number {
    return this.#run(() => Number(this.#statement(sql).run(...bindable(params)).changes));
  }

  async transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T> {
    const previous = this.#lock;
    let release = () => {};
    this.#lock = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    const tx: SqlClient = {
      dialect: "sqlite",
      query: async <Row>(sql: string, params: readonly unknown[] = []) => this.#queryNow<Row>(sql, params),
      execute: async (sql, params = []) => this.#executeNow(sql, params),
      transaction: (inner) => inner(tx),
      close: async () => {},
    };
    try {
      this.#run(() => this.#db.exec("BEGIN IMMEDIATE"));
      try {
        const result = await fn(tx);
        this.#run(() => this.#db.exec("COMMIT"));
        return result;
      } catch (error) {
        if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
        throw error;
      }
    } finally {
      release();
    }
  }

  /**
   * `PRAGMA data_version` changes when another connection (the admin CLI, another process) has
   * committed, and costs a couple of microseconds; this connection's own commits do not change it,
   * hence touch(). It cannot tell tables apart, so any foreign write counts.
   */
  watch(_channel: string): ChangeWatch {
    const dataVersion = this.#db.prepare("PRAGMA data_version");
    let seen: unknown;
    let version = 0;
    return {
      version: () => {
        const current = this.#run(() => (dataVersion.get() as { data_version: number }).data_version);
        if (current !== seen) {
          seen = current;
          version++;
        }
        return version;
      },
      touch: () => {
        version++;
      },
    };
  }

  async close(): Promise<void> {
    await this.#whenUnlocked();
    this.#db.close();
  }
}
