import { randomUUID } from "node:crypto";
import type { Browser, WindowSize } from "../browser/launch.ts";
import { destroyBrowser, type WarmSpare } from "../browser/warm-spare.ts";
import type { Keyboard } from "../keyboard/index.ts";
import type { Logger } from "../logger.ts";

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
  /** Resolves with the reason once the session no longer runs. */
  ended: Promise<string>;
  end: (reason: string) => void;
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

  /** Gives the slot's browser to the session; the same answer again for the session already running. */
  start(sessionId: string): Promise<SessionInfo> {
    const state = this.#state;
    if (state.kind === "running" && state.session.id === sessionId && state.session.info) {
      return Promise.resolve(state.session.info);
    }
    if (state.kind === "starting" && state.session.id === sessionId) return state.started;
    if (this.#shuttingDown) return Promise.reject(new SlotBusyError("the host agent is shutting down"));
    if (state.kind === "stopping") {
      return Promise.reject(new SlotBusyError(`the host is still cleaning up after session ${state.session.id}`));
    }
    if (state.kind !== "idle") {
      return Promise.reject(new SlotBusyError(`the host is running another session (${state.session.id})`));
    }
    let end: (reason: string) => void = () => {};
    const ended = new Promise<string>((resolve) => {
      end = resolve;
    });
    const session: Session = { id: sessionId, browser: undefined, info: undefined, ended, end };
    const started = this.#launch(session);
    this.#state = { kind: "starting", session, started };
    return started;
  }

  async #launch(session: Session): Promise<SessionInfo> {
    const { spare, logger } = this.#deps;
    try {
      session.browser = await spare?.take();
    } catch (error) {
      if (this.#state.kind === "starting" && this.#state.session === session) this.#state = { kind: "idle" };
      this.#remember(session.id, "the browser could not be started");
      session.end("the browser could not be started");
      if (!this.#shuttingDown) spare?.fill();
      throw new BrowserLaunchError(error);
    }
    const browser = session.browser;
    session.info = {
      cdpWsUrl: browser?.cdpWsUrl ?? "",
      headless: browser?.headless ?? this.#deps.display === undefined,
      viewport: browser?.windowSize,
      agentInstance: this.instance,
    };
    // Stopped while the browser was being handed over: the fence waits for this launch and cleans up.
    if (this.#state.kind === "starting" && this.#state.session === session) {
      this.#state = { kind: "running", session };
    }
    if (browser) {
      void browser.exited.then((how) => {
        const state = this.#state;
        if (state.kind !== "running" || state.session !== session) return;
        logger.warn(
          { sessionId: session.id, pid: browser.pid, how },
          "the session's browser exited; ending the session",
        );
        void this.#fence(session, `the browser ${how}`);
      });
    }
    logger.info({ sessionId: session.id, pid: browser?.pid, cdpWsUrl: browser?.cdpWsUrl }, "session started");
    return session.info;
  }

  /** Fences the session if it holds the slot; false when it did not (nothing to stop). */
  async stop(sessionId: string, reason = "stopped"): Promise<boolean> {
    const state = this.#state;
    if (state.kind === "idle" || state.session.id !== sessionId) return false;
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

  /** Resolves with the reason once the session no longer runs (at once when it does not); rejects when signal aborts. */
  async waitEnd(sessionId: string, signal: AbortSignal): Promise<string> {
    const state = this.#state;
    if (state.kind === "idle" || state.session.id !== sessionId) {
      return this.#endings.get(sessionId) ?? "not running on this host";
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      void state.session.ended.then((reason) => {
        signal.removeEventListener("abort", onAbort);
        resolve(reason);
      });
    });
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
    state.stopped = this.#runFence(session, reason, previous);
    return state.stopped;
  }

  async #runFence(session: Session, reason: string, previous: State): Promise<void> {
    const { keyboard, spare, logger } = this.#deps;
    const started = performance.now();
    // A browser still being handed over is finished first, so that it is destroyed too.
    if (previous.kind === "starting") await previous.started.catch(() => undefined);
    // Cancels the running press and every queued one (they fail as interrupted), and releases every key.
    try {
      await keyboard?.releaseAll();
    } catch (error) {
      logger.warn({ err: error, sessionId: session.id }, "could not release keys while stopping the session");
    }
    if (session.browser) await destroyBrowser(session.browser);
    this.#remember(session.id, reason);
    session.end(reason);
    this.#state = { kind: "idle" };
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
