import { randomBytes } from "node:crypto";
import { focusWindowOf } from "../display/window-focus.ts";
import type { Logger } from "../logger.ts";
import { trustCertificates } from "./ca-trust.ts";
import { type Browser, launchChromium, type WindowSize } from "./launch.ts";
import { makeBrowserDir, removeBrowserDir } from "./profile.ts";

export interface BrowserFactoryOptions {
  chromiumPath: string;
  display: string | undefined;
  dataDir: string;
  windowSize: WindowSize;
  sandbox: boolean;
  /** The agent's proxy relay (see proxy-relay/relay.ts), which every browser is pointed at. */
  proxyServer: string;
  logger: Logger;
}

/** How long a new browser's window may take to be mapped and focused. */
const FOCUS_TIMEOUT_MS = 10_000;
/** A browser is given this long to exit on SIGTERM before its process group is killed. */
const BROWSER_KILL_GRACE_MS = 2_000;

/**
 * Launches a fresh Chromium in a new, empty directory of its own, its window focused. The
 * directory is deleted again when the launch fails.
 */
export async function launchFreshBrowser(
  options: BrowserFactoryOptions & {
    /** PEM CAs the browser trusts for sites besides the public roots (see ca-trust.ts). */
    trustedCas?: string;
  },
): Promise<Browser> {
  const dir = await makeBrowserDir(options.dataDir, `${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`);
  let browser: Browser | undefined;
  try {
    if (options.trustedCas) await trustCertificates(dir.home, options.trustedCas);
    browser = await launchChromium({ ...options, dir });
    if (options.display !== undefined) await focusWindowOf(options.display, browser.pid, FOCUS_TIMEOUT_MS);
    return browser;
  } catch (error) {
    await browser?.kill(0);
    await removeBrowserDir(dir);
    throw error;
  }
}

/** Ends a browser and deletes everything it wrote. */
export async function destroyBrowser(browser: Browser): Promise<void> {
  await browser.kill(BROWSER_KILL_GRACE_MS);
  await removeBrowserDir(browser.dir);
}

/** After a failed launch, how long the spare waits before it tries again. */
const RETRY_MS = 5_000;

/**
 * One browser launched ahead of need, so a session starts without waiting for Chromium. Only the
 * slot asks for one (fill), when it is idle, after the previous session's browser was destroyed,
 * so nothing a session did can reach it; a spare that exits while it waits is replaced, unless a
 * session took the slot meanwhile. Whether the last launch worked is the host's health: a host
 * that cannot launch Chromium must not be handed sessions.
 */
export class WarmSpare {
  readonly #options: BrowserFactoryOptions;
  #spare: Promise<Browser | undefined> | undefined;
  #closed = false;
  /** Counts take() calls: a refill that began before one must not launch a spare beside a session's browser. */
  #takes = 0;
  #retry: NodeJS.Timeout | undefined;
  /** Told whether browsers can be launched, each time that changes. */
  onHealthChange: (healthy: boolean) => void = () => {};
  #healthy = true;

  constructor(options: BrowserFactoryOptions) {
    this.#options = options;
  }

  get healthy(): boolean {
    return this.#healthy;
  }

  /** Starts launching a spare unless one is there or on its way. */
  fill(): void {
    clearTimeout(this.#retry);
    if (this.#closed || this.#spare) return;
    const takes = this.#takes;
    const spare = this.#launch().then(
      (browser) => {
        this.#options.logger.info({ pid: browser.pid }, "warm spare browser ready");
        void browser.exited.then(async (how) => {
          // Still waiting as the spare: replace it. Once taken, its exit is the session's business.
          if (this.#spare !== spare) return;
          this.#options.logger.warn({ pid: browser.pid, how }, "the warm spare browser exited; launching another");
          this.#spare = undefined;
          await destroyBrowser(browser).catch((error: unknown) =>
            this.#options.logger.error({ err: error }, "could not destroy the exited spare browser"),
          );
          if (this.#takes === takes) this.fill();
        });
        return browser;
      },
      (error: Error) => {
        this.#options.logger.error(
          { err: error },
          `could not launch the warm spare browser; trying again in ${RETRY_MS} ms`,
        );
        if (this.#spare === spare) this.#spare = undefined;
        if (this.#takes === takes && !this.#closed) this.#retry = setTimeout(() => this.fill(), RETRY_MS);
        return undefined;
      },
    );
    this.#spare = spare;
  }

  /**
   * The spare (waiting for it if it is still launching), or a browser launched now when there is
   * none or it failed. A session that must trust more CAs (`trustedCas`: Chromium reads them at
   * start) gets a browser launched now, and the spare is destroyed: two windows on one display
   * would fight for its focus. The caller owns the browser it gets.
   */
  async take(trustedCas = ""): Promise<Browser> {
    this.#takes++;
    clearTimeout(this.#retry);
    const spare = this.#spare;
    this.#spare = undefined;
    const browser = spare && (await spare);
    if (browser?.alive && trustedCas === "") return browser;
    if (browser) await destroyBrowser(browser);
    return this.#launch(trustedCas);
  }

  /** Destroys the spare, and stops making new ones. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    const spare = this.#spare;
    this.#spare = undefined;
    const browser = spare && (await spare);
    if (browser) await destroyBrowser(browser);
  }

  async #launch(trustedCas = ""): Promise<Browser> {
    try {
      const browser = await launchFreshBrowser({ ...this.#options, trustedCas });
      this.#setHealthy(true);
      return browser;
    } catch (error) {
      this.#setHealthy(false);
      throw error;
    }
  }

  #setHealthy(healthy: boolean): void {
    if (healthy === this.#healthy) return;
    this.#healthy = healthy;
    this.onHealthChange(healthy);
  }
}
