import { randomInt } from "node:crypto";
import pg from "pg";
import type { Membership } from "./sql-client.ts";

const RECONNECT_DELAY_MS = 1_000;
/** Keys are drawn from the positive int4 range (the second half of a two-key advisory lock). */
const MAX_KEY = 2 ** 31 - 1;

/**
 * This process's membership of a group of replicas, held as a session-level PostgreSQL advisory
 * lock (group, key) on a connection of its own. The database itself says who is a member: the
 * locks that are granted. A replica that dies loses its lock the moment its connection closes, so
 * the others see it gone at their next look without any heartbeat written anywhere; one that is
 * cut off (no FIN) is dropped when TCP keepalive gives up on its connection.
 */
export class PostgresMembership implements Membership {
  readonly #connectionString: string;
  readonly #group: number;
  readonly #connectTimeoutMs: number;
  readonly #pool: { query(sql: string, params: unknown[]): Promise<{ rows: { key: number }[] }> };
  #client: pg.Client | undefined;
  #key: number | undefined;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;
  readonly joined: Promise<void>;
  #markJoined: () => void = () => {};

  constructor(
    connectionString: string,
    group: number,
    connectTimeoutMs: number,
    pool: { query(sql: string, params: unknown[]): Promise<{ rows: { key: number }[] }> },
  ) {
    this.#connectionString = connectionString;
    this.#group = group;
    this.#connectTimeoutMs = connectTimeoutMs;
    this.#pool = pool;
    this.joined = new Promise((resolve) => {
      this.#markJoined = resolve;
    });
    void this.#connect();
  }

  get self(): string | undefined {
    return this.#key === undefined ? undefined : String(this.#key);
  }

  async members(): Promise<string[] | undefined> {
    if (this.#key === undefined) return undefined;
    const { rows } = await this.#pool.query(
      `SELECT objid::int AS key FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND classid = $1::int::oid
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      [this.#group],
    );
    return rows.map((row) => String(row.key));
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#key = undefined;
    await this.#client?.end().catch(() => {});
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.#connectionString,
      connectionTimeoutMillis: this.#connectTimeoutMs,
      keepAlive: true,
    });
    this.#client = client;
    client.on("error", () => this.#lost(client));
    client.on("end", () => this.#lost(client));
    try {
      await client.connect();
      for (;;) {
        const key = randomInt(1, MAX_KEY);
        const { rows } = await client.query<{ held: boolean }>("SELECT pg_try_advisory_lock($1, $2) AS held", [
          this.#group,
          key,
        ]);
        if (rows[0]?.held) {
          if (this.#client === client && !this.#closed) {
            this.#key = key;
            this.#markJoined();
          }
          break;
        }
      }
    } catch {
      this.#lost(client);
    }
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#key = undefined;
    void client.end().catch(() => {});
    if (this.#closed) return;
    this.#retry = setTimeout(() => void this.#connect(), RECONNECT_DELAY_MS);
    this.#retry.unref();
  }
}
