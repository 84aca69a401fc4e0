import type { Logger } from "../../logger.ts";
import type { BrowserSessionRecord } from "../../store/browser-sessions.ts";
import type { Store } from "../../store/store.ts";
import { cdpMetrics } from "./cdp-metrics.ts";
import type { CloseReason } from "./close-reasons.ts";
import type { CdpConnection, ConnectionOwner } from "./connection.ts";

/** CDP traffic moves a session's idle deadline at most this often: one store write a second per session. */
const TOUCH_INTERVAL_MS = 1_000;

/**
 * This replica's open CDP sockets, by session. It pings them, turns their traffic into session
 * activity, and closes every socket of a session that ended. Another replica's delete reaches
 * them through the agent: its fence ends every DevTools stream of the session.
 */
export class CdpSockets implements ConnectionOwner {
  readonly #bySession = new Map<string, Set<CdpConnection>>();
  /** When each session's idle deadline was last moved by CDP traffic. */
  readonly #touchedAt = new Map<string, number>();
  readonly #store: Store;
  readonly #logger: Logger;
  readonly #pinger: NodeJS.Timeout;
  #closed = false;

  constructor(deps: { store: Store; logger: Logger; pingIntervalMs: number }) {
    this.#store = deps.store;
    this.#logger = deps.logger;
    this.#pinger = setInterval(() => {
      for (const connections of this.#bySession.values()) for (const connection of connections) connection.ping();
    }, deps.pingIntervalMs);
    this.#pinger.unref();
  }

  /** True once the gateway is shutting down: no socket is kept from then on. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Holds the connection and starts it. */
  add(connection: CdpConnection): void {
    const { id } = connection.session;
    cdpMetrics.opened();
    // An upgrade that was under way when the gateway began to shut down.
    if (this.#closed) {
      connection.start();
      connection.close("gateway_shutdown");
      return;
    }
    let connections = this.#bySession.get(id);
    if (!connections) {
      connections = new Set();
      this.#bySession.set(id, connections);
    }
    connections.add(connection);
    this.#logger.info({ sessionId: id, open: connections.size }, "cdp socket opened");
    connection.start();
  }

  removed(connection: CdpConnection, reason: CloseReason): void {
    const { id } = connection.session;
    const connections = this.#bySession.get(id);
    connections?.delete(connection);
    if (connections?.size === 0) {
      this.#bySession.delete(id);
      this.#touchedAt.delete(id);
    }
    cdpMetrics.closed(reason);
    this.#logger.info({ sessionId: id, reason }, "cdp socket closed");
  }

  activity(session: BrowserSessionRecord): void {
    const now = Date.now();
    if (now - (this.#touchedAt.get(session.id) ?? 0) < TOUCH_INTERVAL_MS) return;
    this.#touchedAt.set(session.id, now);
    this.#store.browserSessions
      .touch(session, new Date(now).toISOString())
      .then(async (active) => {
        if (active) return;
        // Ended by some replica meanwhile: its sockets hear why, as from the agent's fence.
        const ended = await this.#store.browserSessions.find(session.organizationId, session.id, true);
        this.closeSession(session.id, `browser session ${session.id} ended: ${ended?.endReason ?? "unknown"}`);
      })
      .catch((error: unknown) =>
        this.#logger.warn({ err: error, sessionId: session.id }, "could not record the session's CDP activity"),
      );
  }

  /** Closes every socket of the session (it ended) with its reason. */
  closeSession(sessionId: string, detail: string): void {
    for (const connection of this.#bySession.get(sessionId) ?? []) connection.close("session_ended", detail);
  }

  /** At shutdown: stops pinging and closes every socket. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#pinger);
    for (const connections of this.#bySession.values()) {
      for (const connection of connections) connection.close("gateway_shutdown");
    }
  }
}
