import { randomBytes } from "node:crypto";
import { focusWindowOf } from "../display/window-focus.ts";
import type { Logger } from "../logger.ts";
import { type Browser, launchChromium, type WindowSize } from "./launch.ts";
import { makeBrowserDir, removeBrowserDir } from "./profile.ts";

export interface BrowserFactoryOptions {
  chromiumPath: string;
  display: string | undefined;
  dataDir: string;
  windowSize: WindowSize;
  sandbox: boolean;
  logger: Logger;
}

/** How long a new browser's window may take to be mapped and focused. */
const FOCUS_TIMEOUT_MS = 10_000;
/** A browser is given this long to exit on SIGTERM before its process group is killed. */
export const BROWSER_KILL_GRACE_MS = 2_000;

/**
 * Launches a fresh Chromium in a new, empty directory of its own, its window focused. The
 * directory is deleted again when the launch fails.
 */
export async function launchFreshBrowser(options: BrowserFactoryOptions): Promise<Browser> {
  const dir = await makeBrowserDir(options.dataDir, `${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`);
  let browser: Browser | undefined;
  try {
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

/**
 * One browser launched ahead of need, so a session starts without waiting for Chromium. It is
 * launched only when the slot is idle, after the previous session's browser was destroyed, so
 * nothing a session did can reach it; a spare that exits while it waits is replaced.
 */
export class WarmSpare {
  readonly #options: BrowserFactoryOptions;
  #spare: Promise<Browser | undefined> | undefined;
  #closed = false;

  constructor(options: BrowserFactoryOptions) {
    this.#options = options;
  }

  /** Starts launching a spare unless one is there or on its way. */
  fill(): void {
    if (this.#closed || this.#spare) return;
    const spare = launchFreshBrowser(this.#options).then(
      (browser) => {
        this.#options.logger.info({ pid: browser.pid }, "warm spare browser ready");
        void browser.exited.then(async (how) => {
          // Still waiting as the spare: replace it. Once taken, its exit is the session's business.
          if (this.#spare !== spare) return;
          this.#options.logger.warn({ pid: browser.pid, how }, "the warm spare browser exited; launching another");
          this.#spare = undefined;
          await destroyBrowser(browser);
          this.fill();
        });
        return browser;
      },
      (error: Error) => {
        this.#options.logger.error({ err: error }, "could not launch the warm spare browser");
        if (this.#spare === spare) this.#spare = undefined;
        return undefined;
      },
    );
    this.#spare = spare;
  }

  /**
   * The spare (waiting for it if it is still launching), or a browser launched now when there is
   * none or it failed. The caller owns the browser it gets.
   */
  async take(): Promise<Browser> {
    const spare = this.#spare;
    this.#spare = undefined;
    const browser = spare && (await spare);
    if (browser?.alive) return browser;
    if (browser) await destroyBrowser(browser);
    return launchFreshBrowser(this.#options);
  }

  /** Destroys the spare, and stops making new ones. */
  async close(): Promise<void> {
    this.#closed = true;
    const spare = this.#spare;
    this.#spare = undefined;
    const browser = spare && (await spare);
    if (browser) await destroyBrowser(browser);
  }
}
