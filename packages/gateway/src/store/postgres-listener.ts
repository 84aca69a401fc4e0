import pg from "pg";
import { CHANNEL_NAME, type ChangeWatch } from "./sql-client.ts";

const RECONNECT_DELAY_MS = 1_000;

/**
 * A ChangeWatch over LISTEN on its own connection (a pooled one would stop hearing once handed
 * back). A writer calls pg_notify(channel, …) in the transaction that changes the rows, so the
 * notification leaves at commit. While the connection is down, version() is undefined: a
 * notification sent then is lost, so no cached copy may be trusted until LISTEN is back.
 */
export class PostgresListener implements ChangeWatch {
  readonly #connectionString: string;
  readonly #channel: string;
  readonly #connectTimeoutMs: number;
  #client: pg.Client | undefined;
  #listening = false;
  #version = 0;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;

  constructor(connectionString: string, channel: string, connectTimeoutMs: number) {
    if (!CHANNEL_NAME.test(channel)) throw new Error(`invalid channel name ${JSON.stringify(channel)}`);
    this.#connectionString = connectionString;
    this.#channel = channel;
    this.#connectTimeoutMs = connectTimeoutMs;
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
    this.#listening = false;
    await this.#client?.end().catch(() => {});
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.#connectionString,
      connectionTimeoutMillis: this.#connectTimeoutMs,
    });
    this.#client = client;
    // Both fire when the server goes away; lost() acts once per client.
    client.on("error", () => this.#lost(client));
    client.on("end", () => this.#lost(client));
    client.on("notification", () => {
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
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#listening = false;
    this.#version++;
    void client.end().catch(() => {});
    if (this.#closed) return;
    this.#retry = setTimeout(() => void this.#connect(), RECONNECT_DELAY_MS);
    this.#retry.unref();
  }
}
