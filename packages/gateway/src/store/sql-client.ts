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
  /** Present on a store's own client, not on a transaction's. */
  watch?(channel: string): ChangeWatch;
  /**
   * Makes this process a member of a group of processes sharing the database, until close():
   * PostgreSQL only (an embedded SQLite store has one gateway).
   */
  join?(group: number): Membership;
}

/** This process's place among the live members of a group (see PostgresMembership). */
export interface Membership {
  /** This member's key; undefined while it is not (yet, or any more) a member. */
  readonly self: string | undefined;
  /** Resolves once this process first became a member. */
  readonly joined: Promise<void>;
  /** The keys of every live member, this one's included; undefined while this one is not a member. */
  members(): Promise<string[] | undefined>;
  close(): Promise<void>;
}

/**
 * Lets a cache in this process know when rows it copied may have changed in the database. A
 * writer names the channel in its SQL (see ApiKeyRepository.revoke); the SQLite client cannot
 * tell channels apart and reports every commit of another connection.
 */
export interface ChangeWatch {
  /**
   * Differs from what it returned before whenever a write on the channel may have committed since,
   * through any connection of any process; undefined while that cannot be known, and then nothing
   * may be served from a cache.
   */
  version(): number | undefined;
  /** Records a write this process made itself, so its own next read does not wait to hear of it. */
  touch(): void;
}

/** Channel names go into SQL as identifiers, so only these are allowed. */
export const CHANNEL_NAME = /^[a-z_]+$/;

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
