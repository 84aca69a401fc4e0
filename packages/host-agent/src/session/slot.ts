import { randomUUID } from "node:crypto";
import type { ProxyRoute } from "@browser-infra/contract";
import type { Browser, WindowSize } from "../browser/launch.ts";
import { destroyBrowser, type WarmSpare } from "../browser/warm-spare.ts";
import type { Keyboard } from "../keyboard/index.ts";
import type { Logger } from "../logger.ts";
import type { ProxyRelay } from "../proxy-relay/relay.ts";

/** What a started session gets. */
export interface SessionInfo {
  cdpWsUrl: string;
  headless: boolean;
  viewport: WindowSize | undefined;
  agentInstance: string;
}

/** A call named a session this agent is not running: never started, stopped, or its browser died. */
export class SessionNotRunningError extends Error {
  constructor(sessionId: string, reason: string | undefined) {
    super(`browser session ${sessionId} is not running on this host${reason ? `: ${reason}` : ""}`);
    this.name = "SessionNotRunningError";
  }
}

/** The slot is taken by another session, or still being cleaned after one. */
export class SlotBusyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SlotBusyError";
  }
}

/** The agent is stopping (or draining): it takes no session any more; the gateway should take another host. */
export class ShuttingDownError extends Error {
  constructor() {
    super("the host agent is shutting down");
    this.name = "ShuttingDownError";
  }
}

/** Chromium could not be started for the session. */
export class BrowserLaunchError extends Error {
  constructor(cause: unknown) {
    super(`the browser could not be started: ${(cause as Error).message}`, { cause });
    this.name = "BrowserLaunchError";
  }
}

interface Session {
  id: string;
  browser: Browser | undefined;
  info: SessionInfo | undefined;
  /** Why it no longer runs; undefined while it does. */
  endReason: string | undefined;
  /** WaitSessionEnd calls waiting for it to end; each removes itself when its call is cancelled. */
  waiters: Set<(reason: string) => void>;
  /** Work tied to the session (see hold()), ended first thing when it is fenced; each removes itself when it ends. */
  attachments: Set<(reason: string) => void>;
}

/** A DevTools connection's hold on the running session. */
export interface Attachment {
  /** Chromium's DevTools WebSocket URL on the host's loopback. */
  cdpWsUrl: string;
  /** The connection ended by itself: the slot no longer needs to close it. */
  detach(): void;
}

function endSession(session: Session, reason: string): void {
  if (session.endReason !== undefined) return;
  session.endReason = reason;
  for (const waiter of session.waiters) waiter(reason);
  session.waiters.clear();
}

type State =
  | { kind: "idle" }
  | { kind: "starting"; session: Session; started: Promise<SessionInfo> }
  | { kind: "running"; session: Session }
  | { kind: "stopping"; session: Session; stopped: Promise<void> };

/** Sessions that ended lately and why, so a late WaitSessionEnd gets the real reason. */
const REMEMBERED_ENDINGS = 64;

export interface SlotDeps {
  /** The browser factory; undefined on a host that runs no browser. */
  spare: WarmSpare | undefined;
  /** The relay every browser's traffic goes through; routed for each session; undefined without a browser. */
  relay: ProxyRelay | undefined;
  /**
   * Called when a session's browser could not be destroyed (a process survived SIGKILL, its
   * directory could not be deleted): the agent cannot vouch for the slot any more, and exits so
   * that its restart wipes everything.
   */
  onFenceFailure: (error: unknown) => void;
  /** The X display the browsers open on; undefined: headless. */
  display: string | undefined;
  keyboard: Keyboard | undefined;
  logger: Logger;
}

/**
 * The agent's one browser slot: at most one session at a time, with its own browser. Every
 * session-scoped call checks the session here first. Stopping is a fence: the session's input is
 * cancelled and its keys released, its browser's process group killed and its directory deleted
 * before stop() resolves, and only then is a new spare launched.
 */
export class BrowserSlot {
  /** Identifies this run of the agent; a restarted agent runs none of its predecessor's sessions. */
  readonly instance: string = randomUUID();
  readonly #deps: SlotDeps;
  #state: State = { kind: "idle" };
  readonly #endings = new Map<string, string>();
  #shuttingDown = false;

  constructor(deps: SlotDeps) {
    this.#deps = deps;
    deps.spare?.fill();
  }

  get hasBrowser(): boolean {
    return this.#deps.spare !== undefined;
  }

  /** The session that holds the slot (starting, running or being stopped); undefined when idle. */
  get currentSessionId(): string | undefined {
    return this.#state.kind === "idle" ? undefined : this.#state.session.id;
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /**
   * Gives the slot's browser to the session, its traffic through `proxy` (undefined: direct); the
   * same answer again for the session already running.
   */
  start(sessionId: string, proxy?: ProxyRoute): Promise<SessionInfo> {
    const state = this.#state;
    if (state.kind === "running" && state.session.id === sessionId && state.session.info) {
      return Promise.resolve(state.session.info);
    }
    if (state.kind === "starting" && state.session.id === sessionId) return state.started;
    // A session ends once: a start that arrives after its stop (a slow channel, another replica's
    // delete) must not launch a browser nobody will stop.
    if (this.#endings.has(sessionId)) {
      return Promise.reject(new SessionNotRunningError(sessionId, this.#endings.get(sessionId)));
    }
    if (this.#shuttingDown) return Promise.reject(new ShuttingDownError());
    if (state.kind === "stopping") {
      return Promise.reject(new SlotBusyError(`the host is still cleaning up after session ${state.session.id}`));
    }
    if (state.kind !== "idle") {
      return Promise.reject(new SlotBusyError(`the host is running another session (${state.session.id})`));
    }
    const session: Session = {
      id: sessionId,
      browser: undefined,
      info: undefined,
      endReason: undefined,
      waiters: new Set(),
      attachments: new Set(),
    };
    const started = this.#launch(session, proxy);
    this.#state = { kind: "starting", session, started };
    return started;
  }

  async #launch(session: Session, proxy: ProxyRoute | undefined): Promise<SessionInfo> {
    const { spare, relay, logger } = this.#deps;
    try {
      session.browser = await spare?.take(proxy?.caBundle);
    } catch (error) {
      if (this.#state.kind === "starting" && this.#state.session === session) this.#state = { kind: "idle" };
      this.#remember(session.id, "the browser could not be started");
      endSession(session, "the browser could not be started");
      if (!this.#shuttingDown) spare?.fill();
      throw new BrowserLaunchError(error);
    }
    // Stopped while the browser was being handed over: the fence (waiting for this launch) destroys
    // it, and nobody may be given its URL.
    if (this.#state.kind !== "starting" || this.#state.session !== session) {
      throw new SessionNotRunningError(session.id, "stopped while it started");
    }
    const browser = session.browser;
    session.info = {
      cdpWsUrl: browser?.cdpWsUrl ?? "",
      headless: browser?.headless ?? this.#deps.display === undefined,
      viewport: browser?.windowSize,
      agentInstance: this.instance,
    };
    // Routed before anyone can use the browser: the spare's relay refused everything until now.
    relay?.use(proxy);
    this.#state = { kind: "running", session };
    if (browser) {
      void browser.exited.then((how) => {
        const state = this.#state;
        if (state.kind !== "running" || state.session !== session) return;
        logger.warn(
          { sessionId: session.id, pid: browser.pid, how },
          "the session's browser exited; ending the session",
        );
        // A failed fence was reported to onFenceFailure already.
        void this.#fence(session, `the browser ${how}`).catch(() => undefined);
      });
    }
    logger.info({ sessionId: session.id, pid: browser?.pid, cdpWsUrl: browser?.cdpWsUrl }, "session started");
    return session.info;
  }

  /** Fences the session if it holds the slot; false when it did not (nothing to stop). */
  async stop(sessionId: string, reason = "stopped"): Promise<boolean> {
    const state = this.#state;
    if (state.kind === "idle" || state.session.id !== sessionId) {
      // Remembered, so that a start for it arriving late is refused.
      if (!this.#endings.has(sessionId)) this.#remember(sessionId, "stopped before it started");
      return false;
    }
    if (state.kind === "stopping") {
      await state.stopped;
      return true;
    }
    await this.#fence(state.session, reason);
    return true;
  }

  /** Throws SessionNotRunningError unless the session is the one running. */
  require(sessionId: string): void {
    const state = this.#state;
    if (state.kind !== "running" || state.session.id !== sessionId) {
      throw new SessionNotRunningError(sessionId, this.#endings.get(sessionId));
    }
  }

  /**
   * Registers a DevTools connection to the running session's browser: onEnd is called with the
   * reason when the session is fenced, before its browser is killed. Throws SessionNotRunningError
   * unless the session runs, with a browser.
   */
  attach(sessionId: string, onEnd: (reason: string) => void): Attachment {
    this.require(sessionId);
    const { session } = this.#state as State & { kind: "running" };
    if (!session.browser) throw new SessionNotRunningError(sessionId, "this host runs no browser");
    return { cdpWsUrl: session.browser.cdpWsUrl, detach: this.hold(sessionId, onEnd) };
  }

  /**
   * Ties work in progress to the running session (a DevTools connection, a file being written):
   * onEnd is called with the reason first thing when the session is fenced, before its browser is
   * killed. Returns the release, for work that ended by itself. Throws SessionNotRunningError
   * unless the session runs.
   */
  hold(sessionId: string, onEnd: (reason: string) => void): () => void {
    this.require(sessionId);
    const { session } = this.#state as State & { kind: "running" };
    session.attachments.add(onEnd);
    return () => session.attachments.delete(onEnd);
  }

  /** Resolves with the reason once the session no longer runs (at once when it does not); rejects when signal aborts. */
  async waitEnd(sessionId: string, signal: AbortSignal): Promise<string> {
    const state = this.#state;
    if (state.kind === "idle" || state.session.id !== sessionId) {
      return this.#endings.get(sessionId) ?? "not running on this host";
    }
    const { session } = state;
    if (session.endReason !== undefined) return session.endReason;
    signal.throwIfAborted();
    return new Promise((resolve, reject) => {
      const waiter = (reason: string) => {
        signal.removeEventListener("abort", onAbort);
        resolve(reason);
      };
      const onAbort = () => {
        session.waiters.delete(waiter);
        reject(signal.reason);
      };
      session.waiters.add(waiter);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /**
   * Refuses new sessions from now on and waits up to graceMs for the running one, if any, to end by
   * itself (its client deletes it, it idles out): a scale-down then ends no busy browser that
   * finishes in time. shutdown() ends whatever still runs after it.
   */
  async drain(graceMs: number): Promise<void> {
    this.#shuttingDown = true;
    const state = this.#state;
    if (state.kind === "idle" || graceMs === 0) return;
    await this.waitEnd(state.session.id, AbortSignal.timeout(graceMs)).catch(() => undefined);
  }

  /** Ends the running session, if any, and the spare; new sessions are refused from now on. */
  async shutdown(): Promise<void> {
    this.#shuttingDown = true;
    const state = this.#state;
    if (state.kind === "stopping") await state.stopped;
    else if (state.kind !== "idle") await this.#fence(state.session, "the host agent shut down");
    await this.#deps.spare?.close();
  }

  #fence(session: Session, reason: string): Promise<void> {
    const previous = this.#state;
    const state: State & { kind: "stopping" } = { kind: "stopping", session, stopped: Promise.resolve() };
    // Set before any work, so that from now on every call for the session is refused.
    this.#state = state;
    // DevTools clients hear why at once, not when the browser's sockets drop after its kill.
    for (const onEnd of session.attachments) onEnd(reason);
    session.attachments.clear();
    // Nothing the session opened reaches the network any more, nor can the next session use it.
    this.#deps.relay?.clear();
    state.stopped = this.#runFence(session, reason, previous).catch((error: unknown) => {
      this.#deps.onFenceFailure(error);
      throw error;
    });
    return state.stopped;
  }

  async #runFence(session: Session, reason: string, previous: State): Promise<void> {
    const { keyboard, spare, logger } = this.#deps;
    const started = performance.now();
    // A browser still being handed over is finished first, so that it is destroyed too.
    if (previous.kind === "starting") await previous.started.catch(() => undefined);
    // Cancels the running press and every queued one (they fail as interrupted), releases every key
    // and turns the locks off.
    try {
      await keyboard?.releaseAll();
    } catch (error) {
      logger.warn({ err: error, sessionId: session.id }, "could not release keys while stopping the session");
    }
    try {
      if (session.browser) await destroyBrowser(session.browser);
    } finally {
      // Whatever happened, the session has ended: nothing may be refused or awaited for it forever.
      this.#remember(session.id, reason);
      endSession(session, reason);
      this.#state = { kind: "idle" };
    }
    logger.info(
      { sessionId: session.id, reason, durationMs: Math.round(performance.now() - started) },
      "session stopped",
    );
    if (!this.#shuttingDown) spare?.fill();
  }

  #remember(sessionId: string, reason: string): void {
    this.#endings.set(sessionId, reason);
    if (this.#endings.size > REMEMBERED_ENDINGS) {
      const oldest = this.#endings.keys().next().value;
      if (oldest !== undefined) this.#endings.delete(oldest);
    }
  }
}
