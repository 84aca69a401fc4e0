import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Kernel from "@onkernel/sdk";
import { type Browser, type Locator, type Page, chromium as playwright } from "playwright-core";
import { expect } from "vitest";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import { openStore, type Store, sqlitePathIn } from "../../packages/gateway/src/store/store.ts";
import { DEFAULT_CHROMIUM_PATH } from "../../packages/host-agent/src/config.ts";
import { X11Connection } from "../../packages/host-agent/src/keyboard/x11-client.ts";
import { type AgentProcess, type GatewayProcess, startAgent, startGatewayProcess } from "./processes.ts";

/** How long Chromium may take to show what a step did, on a loaded machine. */
export const STEP_TIMEOUT_MS = 15_000;

/**
 * The quick start's shape for the computer controls: an agent with its own Xvfb and Debian's Chromium, a
 * gateway on SQLite, one organization with a session whose page (served from loopback) is open over CDP.
 */
export interface InputStack {
  agent: AgentProcess;
  gateway: GatewayProcess;
  store: Store;
  kernel: Kernel;
  session: Kernel.BrowserCreateResponse;
  browser: Browser;
  page: Page;
  pageUrl: string;
  /** The agent's own X display, for reading the server's state (pointer, buttons) directly. */
  display: string;
  /** The buttons the X server reports down (QueryPointer's mask, buttons 1 to 5) and the pointer's position. */
  pointer(): Promise<{ x: number; y: number; buttonsDown: number[] }>;
  stop(): Promise<void>;
}

export async function startInputStack(html: string, agentEnv: NodeJS.ProcessEnv = {}): Promise<InputStack> {
  const server: Server = createServer((_req, res) =>
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const pageUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const dataDir = mkdtempSync(join(tmpdir(), "gateway-input-"));
  const agent = await startAgent({
    AGENT_XVFB: "1024x768x24",
    AGENT_CHROMIUM_PATH: DEFAULT_CHROMIUM_PATH,
    ...agentEnv,
  });
  const gateway = await startGatewayProcess({ DATA_DIR: dataDir, HOST_AGENTS: agent.address });
  const store = await openStore({ sqlitePath: sqlitePathIn(dataDir) });
  const { key } = await createApiKey(store, "org-input", "computer controls end to end");
  const kernel = new Kernel({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
  const session = await kernel.browsers.create({ headless: false, timeout_seconds: 600 });
  const browser = await playwright.connectOverCDP(session.cdp_ws_url, { timeout: STEP_TIMEOUT_MS });
  const listening = agent.lines.map((line) => JSON.parse(line)).find((line) => line.msg === "listening");
  const display = String(listening.display);
  // node-x11 presents the cookie of the file XAUTHORITY names: the agent's display admits no one else.
  process.env.XAUTHORITY = String(listening.xauthority);
  const page = await tabShowing(browser, "about:blank");
  await page.goto(pageUrl);
  await page.bringToFront();
  return {
    agent,
    gateway,
    store,
    kernel,
    session,
    browser,
    page,
    pageUrl,
    display,
    pointer: async () => {
      const connection = await X11Connection.open(display);
      try {
        const { x, y, mask } = await connection.queryPointer();
        return { x, y, buttonsDown: [1, 2, 3, 4, 5].filter((button) => (mask & (1 << (7 + button))) !== 0) };
      } finally {
        await connection.close();
      }
    },
    stop: async () => {
      await browser.close().catch(() => undefined);
      await gateway.stop();
      await agent.stop();
      await store.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Chromium's tab on `url`, once it has one: right after start its only tab may still be on its way there. */
async function tabShowing(browser: Browser, url: string): Promise<Page> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  for (;;) {
    const tab = browser
      .contexts()
      .flatMap((context) => context.pages())
      .find((candidate) => candidate.url() === url);
    if (tab) return tab;
    if (Date.now() > deadline) throw new Error(`Chromium has no tab on ${url} after ${STEP_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** What the tests read of the page's window (this project type-checks without the DOM library). */
interface PageWindow {
  screenX: number;
  screenY: number;
  outerWidth: number;
  innerWidth: number;
  outerHeight: number;
  innerHeight: number;
}

interface Box {
  getBoundingClientRect(): { x: number; y: number; width: number; height: number };
}

/**
 * The screen coordinates of a point of an element (by default its centre). There is no window manager: the
 * window's content starts below Chromium's toolbar, outerHeight - innerHeight pixels down from its top.
 */
export async function screenPoint(element: Locator, fraction = { x: 0.5, y: 0.5 }): Promise<{ x: number; y: number }> {
  return element.evaluate((node: Box, at: { x: number; y: number }) => {
    const view = globalThis as unknown as PageWindow;
    const rect = node.getBoundingClientRect();
    return {
      x: Math.round(view.screenX + (view.outerWidth - view.innerWidth) + rect.x + rect.width * at.x),
      y: Math.round(view.screenY + (view.outerHeight - view.innerHeight) + rect.y + rect.height * at.y),
    };
  }, fraction);
}

/** Polls a value read over CDP until it is `expected` (input reaches Chromium after the call answered). */
export async function expectEventually<T>(read: () => Promise<T>, expected: T, message: string): Promise<void> {
  await expect.poll(read, { timeout: STEP_TIMEOUT_MS, message }).toEqual(expected);
}
