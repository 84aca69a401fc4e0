/**
 * The little the repositories need from a database. SQL is written once, in
 * PostgreSQL's `$1` placeholder style and in the subset both engines share;
 * the SQLite client rewrites placeholders.
 */
export interface SqlClient {
  readonly dialect: "sqlite" | "postgres";
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  execute(sql: string, params?: readonly unknown[]): Promise<number>;
  /** Runs fn in one transaction; on PostgreSQL rows it reads can be locked with FOR UPDATE. */
  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The database could not be reached or answered with a server-side failure. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}

/** A unique constraint refused a write; `constraint` names the index when the engine says. */
export class UniqueViolationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "UniqueViolationError";
  }
}
