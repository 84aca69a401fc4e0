import { randomUUID } from "node:crypto";
import pg from "pg";
import { CHANNEL_NAME, type ChangeWatch } from "./sql-client.ts";

const RECONNECT_DELAY_MS = 1_000;
const DEFAULT_HEARTBEAT_MS = 5_000;
const HEARTBEAT_PREFIX = "heartbeat:";

/**
 * A ChangeWatch over LISTEN on its own connection (a pooled one would stop hearing once handed
 * back). A writer calls pg_notify(channel, …) in the transaction that changes the rows, so the
 * notification leaves at commit. While the connection is down, version() is undefined: a
 * notification sent then is lost, so no cached copy may be trusted until LISTEN is back.
 *
 * A connection can also stop delivering without an error: a half-open TCP connection after a
 * partition, or a pooling proxy that runs LISTEN on a server connection it then hands to someone
 * else. So the listener notifies itself every heartbeat interval and counts the connection lost
 * when that notification has not come back by the next beat: at most two intervals after delivery
 * stops, the cache is dropped and stays unused until LISTEN works again.
 */
export class PostgresListener implements ChangeWatch {
  readonly #connectionString: string;
  readonly #channel: string;
  readonly #connectTimeoutMs: number;
  readonly #heartbeatMs: number;
  #client: pg.Client | undefined;
  #listening = false;
  #version = 0;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  /** The payload of the heartbeat sent and not heard back yet. */
  #awaiting: string | undefined;

  constructor(connectionString: string, channel: string, connectTimeoutMs: number, heartbeatMs = DEFAULT_HEARTBEAT_MS) {
    if (!CHANNEL_NAME.test(channel)) throw new Error(`invalid channel name ${JSON.stringify(channel)}`);
    this.#connectionString = connectionString;
    this.#channel = channel;
    this.#connectTimeoutMs = connectTimeoutMs;
    this.#heartbeatMs = heartbeatMs;
    void this.#connect();
  }

  version(): number | undefined {
    return this.#listening ? this.#version : undefined;
  }

  touch(): void {
    this.#version++;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    clearInterval(this.#heartbeat);
    this.#listening = false;
    await this.#client?.end().catch(() => {});
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.#connectionString,
      connectionTimeoutMillis: this.#connectTimeoutMs,
      keepAlive: true,
    });
    this.#client = client;
    // Both fire when the server goes away; lost() acts once per client.
    client.on("error", () => this.#lost(client));
    client.on("end", () => this.#lost(client));
    client.on("notification", ({ payload }) => {
      if (payload?.startsWith(HEARTBEAT_PREFIX)) {
        if (payload === this.#awaiting) this.#awaiting = undefined;
        return;
      }
      this.#version++;
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.#channel}`);
    } catch {
      this.#lost(client);
      return;
    }
    if (this.#client !== client || this.#closed) return;
    // Whatever was cached before may have been revoked while nobody listened.
    this.#version++;
    this.#listening = true;
    this.#awaiting = undefined;
    this.#heartbeat = setInterval(() => this.#beat(client), this.#heartbeatMs);
    this.#heartbeat.unref();
  }

  #beat(client: pg.Client): void {
    if (this.#awaiting !== undefined) {
      this.#lost(client);
      return;
    }
    const payload = `${HEARTBEAT_PREFIX}${randomUUID()}`;
    this.#awaiting = payload;
    client.query("SELECT pg_notify($1, $2)", [this.#channel, payload]).catch(() => this.#lost(client));
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#listening = false;
    this.#version++;
    clearInterval(this.#heartbeat);
    void client.end().catch(() => {});
    if (this.#closed) return;
    this.#retry = setTimeout(() => void this.#connect(), RECONNECT_DELAY_MS);
    this.#retry.unref();
  }
}
