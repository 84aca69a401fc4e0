import { type BrowserSlot, SessionNotRunningError } from "../session/slot.ts";
import { captureViaCdp } from "./cdp-screen.ts";
import {
  CaptureQueueFullError,
  type Region,
  RegionOutsideScreenError,
  regionProblem,
  ScreenUnavailableError,
} from "./errors.ts";
import { cropPng, encodePng, pngSize } from "./png.ts";
import { XScreen } from "./x-screen.ts";

export interface Screenshot {
  png: Buffer;
  width: number;
  height: number;
}

/**
 * Screenshots taken at once. Two overlap well (one is read from the X server while the other is
 * encoded); more would only add raw images of several MB each to the agent's memory.
 */
const MAX_RUNNING = 2;
/** Screenshots that may wait for one of those; beyond, a request is refused at once (the caller retries). */
const MAX_WAITING = 8;

function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * The session's screen as PNG: the X display's, or, on a host without one, what its headless
 * browser shows (through CDP). Every capture is tied to the session (slot.hold) from the moment it
 * is accepted: when the session is stopped, captures in progress fail at once and their images are
 * dropped, so nothing taken after the stop (of the next session's screen) is ever answered.
 */
export class Screenshots {
  readonly #slot: BrowserSlot;
  readonly #screen: XScreen | undefined;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(deps: { slot: BrowserSlot; display: string | undefined }) {
    this.#slot = deps.slot;
    this.#screen = deps.display ? new XScreen(deps.display) : undefined;
  }

  async capture(sessionId: string, region: Region | undefined, signal: AbortSignal): Promise<Screenshot> {
    if (!this.#screen && !this.#slot.hasBrowser) {
      throw new ScreenUnavailableError("this host has no X display and runs no browser: there is no screen to capture");
    }
    const ended = new AbortController();
    const onEnd = (reason: string) => ended.abort(new SessionNotRunningError(sessionId, reason));
    // Throws SessionNotRunningError unless the session runs; from here its stop ends this capture.
    const hold = this.#screen
      ? { cdpWsUrl: undefined, detach: this.#slot.hold(sessionId, onEnd) }
      : this.#slot.attach(sessionId, onEnd);
    const stop = AbortSignal.any([ended.signal, signal]);
    try {
      await this.#enter(stop);
      try {
        return await abortable(this.#take(region, hold.cdpWsUrl, stop), stop);
      } finally {
        this.#leave();
      }
    } finally {
      hold.detach();
    }
  }

  async #take(region: Region | undefined, cdpWsUrl: string | undefined, stop: AbortSignal): Promise<Screenshot> {
    if (this.#screen) {
      return this.#screen.capture(region, async (image) => {
        stop.throwIfAborted();
        return { png: await encodePng(image), width: image.width, height: image.height };
      });
    }
    const png = await captureViaCdp(cdpWsUrl as string, stop);
    const size = pngSize(png);
    if (!region) return { png, ...size };
    const problem = regionProblem(region, size);
    if (problem) throw new RegionOutsideScreenError(problem);
    return { png: await cropPng(png, region), width: region.width, height: region.height };
  }

  /** Waits for a turn among the MAX_RUNNING; refuses at once when MAX_WAITING wait already. */
  async #enter(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.#running < MAX_RUNNING) {
      this.#running++;
      return;
    }
    if (this.#waiting.length >= MAX_WAITING) throw new CaptureQueueFullError(this.#waiting.length);
    await new Promise<void>((resolve, reject) => {
      const turn = () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = () => {
        this.#waiting.splice(this.#waiting.indexOf(turn), 1);
        reject(signal.reason);
      };
      this.#waiting.push(turn);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  #leave(): void {
    const next = this.#waiting.shift();
    // The turn passes straight to the next in line, which counts as running already.
    if (next) next();
    else this.#running--;
  }
}
