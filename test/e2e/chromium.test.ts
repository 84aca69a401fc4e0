import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Kernel from "@onkernel/sdk";
import { type Browser, type Page, chromium as playwright } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import { openStore, type Store, sqlitePathIn } from "../../packages/gateway/src/store/store.ts";
import { DEFAULT_CHROMIUM_PATH as CHROMIUM_PATH } from "../../packages/host-agent/src/config.ts";
import { createDatabase } from "../support/postgres.ts";
import { type AgentProcess, type GatewayProcess, startAgent, startGatewayProcess } from "../support/processes.ts";
import type { StoreKind } from "../support/stores.ts";

/** How long Chromium may take to show what a step did, on a loaded machine. */
const STEP_TIMEOUT_MS = 15_000;

const REPORT_NAME = "report.txt";
const REPORT = "A file that the page made Chromium download.\n";

const PAGE = `<!doctype html>
<html>
  <head><meta charset="utf-8"><title>keys</title></head>
  <body>
    <input id="typed" autofocus autocomplete="off" spellcheck="false">
    <a id="report" href="/${REPORT_NAME}" download="${REPORT_NAME}">report</a>
  </body>
</html>
`;

/** The page with the text input, and the file its link downloads. */
async function startPageServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.url === "/") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
    } else if (req.url === `/${REPORT_NAME}`) {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end(REPORT);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What the tests touch of the page's HTMLInputElement (this project type-checks without the DOM library). */
interface TextInput {
  value: string;
  selectionStart: number | null;
  selectionEnd: number | null;
  setSelectionRange(start: number, end: number): void;
  ownerDocument: { hasFocus(): boolean; activeElement: unknown };
}

/** Rejects with `what` when `promise` has not settled within `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Chromium's tab on `url`, once it has one: right after start its only tab may still be on its way there. */
async function tabShowing(browser: Browser, url: string): Promise<Page> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  for (;;) {
    const tabs = browser.contexts().flatMap((context) => context.pages());
    const tab = tabs.find((candidate) => candidate.url() === url);
    if (tab) return tab;
    if (Date.now() > deadline) {
      throw new Error(
        `Chromium has no tab on ${url} after ${STEP_TIMEOUT_MS} ms; its tabs: ${tabs.map((t) => t.url())}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let pageServer: { url: string; close(): Promise<void> };

beforeAll(async () => {
  pageServer = await startPageServer();
});

afterAll(async () => {
  await pageServer?.close();
});

describe.each<StoreKind>(["sqlite", "postgres"])(
  "a real Chromium typing the keys pressed through the public API, gateway on %s",
  // A test waits for up to three steps, each of which may take STEP_TIMEOUT_MS on a loaded machine.
  { timeout: 4 * STEP_TIMEOUT_MS },
  (kind) => {
    let agent: AgentProcess;
    let gateway: GatewayProcess;
    let store: Store;
    let dataDir: string;
    let downloads: string;
    let kernel: Kernel;
    let session: Kernel.BrowserCreateResponse;
    let browser: Browser;
    let page: Page;

    beforeAll(async () => {
      dataDir = mkdtempSync(join(tmpdir(), "gateway-chromium-"));
      downloads = mkdtempSync(join(tmpdir(), "chromium-downloads-"));
      // The agent starts its own display and, for the session, a fresh Chromium on it.
      agent = await startAgent({ AGENT_XVFB: "1024x768x24", AGENT_CHROMIUM_PATH: CHROMIUM_PATH });
      const storeEnv: NodeJS.ProcessEnv =
        kind === "postgres"
          ? {
              DATABASE_URL: await createDatabase(inject("postgresUrl")),
              SECRETS_KEY: randomBytes(32).toString("hex"),
            }
          : { DATA_DIR: dataDir };
      store = await openStore(
        storeEnv.DATABASE_URL ? { databaseUrl: storeEnv.DATABASE_URL } : { sqlitePath: sqlitePathIn(dataDir) },
      );
      gateway = await startGatewayProcess({ ...storeEnv, HOST_AGENTS: agent.address });
      const { key } = await createApiKey(store, `org-chromium-${kind}`, "chromium end to end");
      kernel = new Kernel({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });

      session = await kernel.browsers.create({ headless: false, timeout_seconds: 600 });
      browser = await playwright.connectOverCDP(session.cdp_ws_url);
      // The session's browser starts with one blank tab; the test page opens in it.
      page = await tabShowing(browser, "about:blank");
      await page.goto(pageServer.url);
    });

    afterAll(async () => {
      await browser?.close();
      await gateway?.stop();
      await agent?.stop();
      await store?.close();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(downloads, { recursive: true, force: true });
    });

    /** The page's text input. */
    const input = () => page.locator("#typed");

    /**
     * The keys travel through the X server to the window with the X input focus: Chromium's only window, which
     * took the focus when it was mapped. Waits until the page has the focus and the input is its active element.
     */
    async function focusInput(): Promise<void> {
      await page.bringToFront();
      await input().focus();
      await expect
        .poll(
          () =>
            input().evaluate((el: TextInput) => el.ownerDocument.hasFocus() && el.ownerDocument.activeElement === el),
          {
            timeout: STEP_TIMEOUT_MS,
            message: "Chromium's window has the focus and the text input is focused",
          },
        )
        .toBe(true);
    }

    /** Puts `value` in the input with the caret at its end, as if it had just been typed. */
    async function startWith(value: string): Promise<void> {
      await input().evaluate((el: TextInput, text: string) => {
        el.value = text;
        el.setSelectionRange(text.length, text.length);
      }, value);
      expect(await input().inputValue()).toBe(value);
    }

    async function press(...keys: string[]): Promise<void> {
      await kernel.browsers.computer.pressKey(session.session_id, { keys });
    }

    /** The input's value, read over CDP until it is `expected` (keys reach Chromium after press_key answers). */
    async function expectValue(expected: string): Promise<void> {
      await expect
        .poll(() => input().inputValue(), { timeout: STEP_TIMEOUT_MS, message: "the input's value" })
        .toBe(expected);
    }

    beforeEach(async () => {
      await focusInput();
    });

    it("creates the session with a browser of its own, whose record carries its DevTools URL and window size", () => {
      expect(session).toMatchObject({ headless: false, viewport: { width: 1024, height: 768 } });
      expect(session.cdp_ws_url).toMatch(new RegExp(`/browsers/${session.session_id}/cdp\\?token=`));
    });

    it("types lowercase letters: h, then i", async () => {
      await startWith("");
      await press("h");
      await expectValue("h");
      await press("i");
      await expectValue("hi");
    });

    it("types shift+1 as an exclamation mark", async () => {
      await startWith("hi");
      await press("shift+1");
      await expectValue("hi!");
    });

    it("selects everything with ctrl+a and deletes it with BackSpace", async () => {
      await startWith("hi!");
      await press("ctrl+a");
      await expect
        .poll(
          () =>
            input().evaluate((el: TextInput) => ({ value: el.value, start: el.selectionStart, end: el.selectionEnd })),
          { timeout: STEP_TIMEOUT_MS, message: "the input's value and selection" },
        )
        .toEqual({ value: "hi!", start: 0, end: 3 });
      await press("BackSpace");
      await expectValue("");
    });

    it("types an uppercase letter with Shift and lowercase letters after it: W, o, w", async () => {
      await startWith("");
      await press("W");
      await expectValue("W");
      await press("o");
      await expectValue("Wo");
      await press("w");
      await expectValue("Wow");
    });

    it("reports through file_info the file Chromium downloaded when the page's link was clicked", async () => {
      const cdp = await browser.newBrowserCDPSession();
      try {
        await cdp.send("Browser.setDownloadBehavior", {
          behavior: "allow",
          downloadPath: downloads,
          eventsEnabled: true,
        });
        const done = new Promise<string>((resolve) => {
          cdp.on("Browser.downloadProgress", (event) => {
            if (event.state !== "inProgress") resolve(event.state);
          });
        });
        await page.click("#report");
        expect(await within(done, STEP_TIMEOUT_MS, "Chromium did not finish the download")).toBe("completed");
      } finally {
        await cdp.detach();
      }

      const path = join(downloads, REPORT_NAME);
      expect(await kernel.browsers.fs.fileInfo(session.session_id, { path })).toMatchObject({
        name: REPORT_NAME,
        path,
        is_dir: false,
        size_bytes: Buffer.byteLength(REPORT),
        // Chromium writes it with the agent's umask.
        mode: expect.stringMatching(/^-rw-/),
      });
    });
  },
);
