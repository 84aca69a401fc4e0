import { setTimeout as sleep } from "node:timers/promises";
import { Code, type ProxyRouteSchema, RpcError } from "@browser-infra/contract";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { ApiError } from "../errors.ts";
import { hostCallError } from "../hosts/host-errors.ts";
import type { HostPool } from "../hosts/host-pool.ts";
import type { Logger } from "../logger.ts";
import type { BrowserSessionRecord } from "../store/browser-sessions.ts";
import type { Store } from "../store/store.ts";

/**
 * A start may launch Chromium cold (no warm spare ready) and wait for its window; a stop waits
 * for the browser's process group to die and its files to be deleted. Both take longer than a
 * key press, so their deadlines add this to AGENT_TIMEOUT_MS.
 */
const BROWSER_CALL_EXTRA_MS = 45_000;
/** How long one WaitSessionEnd call is held open before it is made again. */
const WATCH_CALL_MS = 60_000;
/** After a failed watch call (host unreachable), wait this long before the next. */
const WATCH_RETRY_MS = 1_000;
/** How long the host check waits for an agent to confirm that a session it no longer reports has ended. */
const CONFIRM_ENDED_MS = 1_000;
export const AGENT_RESTARTED_REASON = "the host agent restarted";

export interface LifecycleDeps {
  store: Store;
  hosts: HostPool;
  agentTimeoutMs: number;
  logger: Logger;
  /** Told of every session this replica ended, before its browser is stopped (its CDP sockets close at once). */
  onEnded?: (sessionId: string, reason: string) => void;
}

/**
 * Where a session's browser starts and ends. The store decides which host a session has; the
 * host's agent starts the browser, and a host is handed out again only once its agent confirmed
 * the previous session's stop (its fence). Each replica watches the sessions it started, so a
 * browser that dies ends its session at once; the host checks catch what no watch saw (sessions
 * of a replica that stopped, an agent that restarted).
 */
export class SessionLifecycle {
  readonly #deps: LifecycleDeps;
  readonly #watches = new Set<Promise<void>>();
  /** Stops under way from this replica, by host and session, so the host checks never pile up another. */
  readonly #stopping = new Set<string>();
  readonly #closing = new AbortController();

  constructor(deps: LifecycleDeps) {
    this.#deps = deps;
  }

  /**
   * Starts the new session's browser on its host and records what it reported. When the browser
   * cannot be started, the session ends and the error says the host is unavailable (safe to retry:
   * the next attempt takes another host or a fresh browser). `proxy`: where the browser's traffic
   * goes (undefined: direct).
   */
  async start(
    session: BrowserSessionRecord,
    requestId?: string,
    proxy?: MessageInitShape<typeof ProxyRouteSchema>,
  ): Promise<BrowserSessionRecord> {
    const { store, hosts, agentTimeoutMs } = this.#deps;
    let started: Awaited<ReturnType<ReturnType<HostPool["client"]>["startSession"]>>;
    try {
      started = await hosts
        .client(session.hostAddress)
        .startSession(
          { sessionId: session.id, proxy },
          { timeoutMs: agentTimeoutMs + BROWSER_CALL_EXTRA_MS, ...(requestId && { requestId }) },
        );
    } catch (error) {
      const reason = `the browser could not be started: ${(error as Error).message}`;
      await this.end(session.id, reason);
      // A host that cannot launch Chromium would take the next create too (and the client's
      // retries): it is out of the pool until a host check finds it serving again, which its agent
      // says once a launch works.
      if (error instanceof RpcError && error.code === Code.UNAVAILABLE) {
        await store.hosts.recordCheck(session.hostAddress, {
          health: "not_serving",
          detail: reason,
          checkedAt: new Date().toISOString(),
        });
      }
      const apiError = hostCallError(error, session.hostAddress);
      throw new ApiError(
        apiError.code === "host_timeout" ? "host_timeout" : "host_unavailable",
        `host ${session.hostAddress} could not start a browser for the session; try again`,
        { cause: error, retry: true },
      );
    }
    const start = {
      cdpWsUrl: started.cdpWsUrl || null,
      headless: started.headless,
      viewport:
        started.viewportWidth > 0 ? { width: started.viewportWidth, height: started.viewportHeight } : session.viewport,
      agentInstance: started.agentInstance,
    };
    let recorded: boolean;
    try {
      recorded = await store.browserSessions.recordStart(session.id, start);
    } catch (error) {
      // Nothing would ever stop this browser: no watch, and the host checks skip sessions not started.
      await this.end(session.id, "the store failed while the browser started").catch(() => undefined);
      throw error;
    }
    if (!recorded) {
      // Deleted while its browser started; its stop may have reached the agent first, so stop it again.
      await this.stopOnHost(session.hostAddress, session.id);
      throw new ApiError("not_found", `browser session "${session.id}" ended while it started`);
    }
    const record = { ...session, ...start };
    this.#watch(record);
    return record;
  }

  /**
   * Ends the active session (of this organization, when given) with the reason, then stops its
   * browser on its host. Returns the ended session, or undefined when it was not active. A host
   * that cannot confirm the stop now stays out of the pool; the host checks stop it when it answers.
   */
  async end(sessionId: string, reason: string, organizationId?: string): Promise<BrowserSessionRecord | undefined> {
    const ended = await this.#deps.store.browserSessions.end(
      sessionId,
      new Date().toISOString(),
      reason,
      organizationId,
    );
    if (!ended) return undefined;
    this.#deps.onEnded?.(sessionId, reason);
    this.#deps.logger.info(
      { sessionId, organizationId: ended.organizationId, host: ended.hostAddress, reason },
      "session ended",
    );
    await this.stopOnHost(ended.hostAddress, sessionId, reason);
    return ended;
  }

  /**
   * Asks the host to stop the session (its fence) for the reason given (the agent tells the
   * session's CDP clients); on confirmation the host is idle again. False when the host could not
   * confirm, or a stop of it is under way from this replica already.
   */
  async stopOnHost(address: string, sessionId: string, reason = ""): Promise<boolean> {
    const { store, hosts, agentTimeoutMs, logger } = this.#deps;
    const key = `${address} ${sessionId}`;
    if (this.#stopping.has(key)) return false;
    this.#stopping.add(key);
    try {
      await hosts
        .client(address)
        .stopSession({ sessionId, reason }, { timeoutMs: agentTimeoutMs + BROWSER_CALL_EXTRA_MS });
    } catch (error) {
      logger.warn(
        { err: error, host: address, sessionId },
        "could not stop the session on its host; the host takes no session until it confirms",
      );
      return false;
    } finally {
      this.#stopping.delete(key);
    }
    await store.hosts.confirmStopped(address, sessionId);
    return true;
  }

  /**
   * Whether the session's agent says it no longer runs the session, with its reason; undefined
   * while it runs it or when the agent cannot be asked. The host checks ask this before ending a
   * session their Describe did not show, since a Describe may predate the session's start.
   */
  async endedOnHost(session: BrowserSessionRecord): Promise<string | undefined> {
    try {
      const ended = await this.#deps.hosts
        .client(session.hostAddress)
        .waitSessionEnd({ sessionId: session.id }, { timeoutMs: CONFIRM_ENDED_MS });
      return endReason(session, ended);
    } catch {
      return undefined;
    }
  }

  /** stopOnHost without waiting for it; a failure (the store down) is logged. */
  stopInBackground(address: string, sessionId: string): void {
    this.stopOnHost(address, sessionId).catch((error: unknown) =>
      this.#deps.logger.error({ err: error, host: address, sessionId }, "stopping the session on its host failed"),
    );
  }

  /** end without waiting for it; a failure (the store down) is logged. */
  endInBackground(sessionId: string, reason: string): void {
    this.end(sessionId, reason).catch((error: unknown) =>
      this.#deps.logger.error({ err: error, sessionId }, "ending the session failed"),
    );
  }

  /** Stops the watches and waits for them. */
  async close(): Promise<void> {
    this.#closing.abort();
    await Promise.all(this.#watches);
  }

  /** Holds a WaitSessionEnd call open while the session is active, and ends it when its host says it ended. */
  #watch(session: BrowserSessionRecord): void {
    const watch = this.#runWatch(session).catch((error: unknown) =>
      this.#deps.logger.error({ err: error, sessionId: session.id }, "watching the session failed"),
    );
    this.#watches.add(watch);
    void watch.finally(() => this.#watches.delete(watch));
  }

  async #runWatch(session: BrowserSessionRecord): Promise<void> {
    const { store, hosts } = this.#deps;
    const signal = this.#closing.signal;
    const client = hosts.client(session.hostAddress);
    while (!signal.aborted) {
      try {
        const ended = await client.waitSessionEnd({ sessionId: session.id }, { timeoutMs: WATCH_CALL_MS, signal });
        await this.end(session.id, endReason(session, ended));
        return;
      } catch (error) {
        if (signal.aborted) return;
        const stillRunning = error instanceof RpcError && error.code === Code.DEADLINE_EXCEEDED;
        if (!stillRunning) await sleep(WATCH_RETRY_MS, undefined, { signal }).catch(() => undefined);
        // Ended by someone else (a delete on another replica, the idle timeout): nothing left to watch.
        if (!(await store.browserSessions.findActiveById(session.id))) return;
      }
    }
  }
}

/** The agent's reason, unless another run of the agent answered: then it restarted, which wiped the session. */
function endReason(session: BrowserSessionRecord, ended: { reason: string; agentInstance: string }): string {
  return session.agentInstance && ended.agentInstance && ended.agentInstance !== session.agentInstance
    ? AGENT_RESTARTED_REASON
    : ended.reason;
}
