import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import Kernel from "@onkernel/sdk";
import { type Browser, type Page, chromium as playwright } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import { openStore, type Store, sqlitePathIn } from "../../packages/gateway/src/store/store.ts";
import { tmpRoot } from "../../packages/host-agent/src/browser/profile.ts";
import { DEFAULT_CHROMIUM_PATH as CHROMIUM_PATH } from "../../packages/host-agent/src/config.ts";
import { X11Connection } from "../../packages/host-agent/src/keyboard/x11-client.ts";
import { freePort } from "../support/ports.ts";
import { type AgentProcess, type GatewayProcess, startAgent, startGatewayProcess } from "../support/processes.ts";

/**
 * Design v2 as a user's agent meets it: every session is a fresh Chromium of its own, driven over
 * CDP with Playwright, that dies completely with the session. Two host agents, each with its own
 * Xvfb and browser, as the quick start runs them.
 */

/** How long Chromium may take to show what a step did, on a loaded machine. */
const STEP_TIMEOUT_MS = 15_000;
const SCREEN = "1024x768x24";

const PAGE = `<!doctype html>
<html>
  <head><meta charset="utf-8"><title>session</title></head>
  <body><input id="typed" autofocus autocomplete="off" spellcheck="false"></body>
</html>
`;

interface TextInput {
  value: string;
  ownerDocument: { hasFocus(): boolean; activeElement: unknown };
}

let pageServer: Server;
let pageUrl: string;
let dataDir: string;
let store: Store;
let gateway: GatewayProcess;
let kernel: Kernel;
const agents: AgentProcess[] = [];
/** What RELIABILITY.md reports, printed at the end. */
const figures: Record<string, number> = {};
const browsers: Browser[] = [];

async function startBrowserAgent(env: NodeJS.ProcessEnv = {}): Promise<AgentProcess> {
  const agent = await startAgent({ AGENT_XVFB: SCREEN, AGENT_CHROMIUM_PATH: CHROMIUM_PATH, ...env });
  agents.push(agent);
  return agent;
}

/** The X display an agent started for itself and its cookie file, from its "listening" log line. */
async function displayOf(agent: AgentProcess): Promise<{ display: string; xauthority: string }> {
  const line = await agent.waitForLog((l) => l.msg === "listening");
  return { display: String(line.display), xauthority: String(line.xauthority) };
}

async function connect(session: Kernel.BrowserCreateResponse): Promise<Browser> {
  const browser = await playwright.connectOverCDP(session.cdp_ws_url);
  browsers.push(browser);
  return browser;
}

/** The browser's one tab, on the test page, its input focused (keys go to the X focus: Chromium's window). */
async function openPage(browser: Browser): Promise<Page> {
  const [page] = browser.contexts()[0]?.pages() ?? [];
  if (!page) throw new Error("the session's browser has no tab");
  await page.goto(pageUrl);
  await page.bringToFront();
  await page.locator("#typed").focus();
  await expect
    .poll(
      () =>
        page
          .locator("#typed")
          .evaluate((el: TextInput) => el.ownerDocument.hasFocus() && el.ownerDocument.activeElement === el),
      { timeout: STEP_TIMEOUT_MS, message: "the page has the focus and its input is active" },
    )
    .toBe(true);
  return page;
}

/** Whether the process exists and has not ended (a zombie waiting for its reaper has). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** The processes of the process group `pgid`. */
function processGroup(pgid: number): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) === pgid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

function hostOf(session: { session_id: string }): Promise<string | undefined> {
  return store.hosts.list().then((hosts) => hosts.find((host) => host.sessionId === session.session_id)?.address);
}

/** Waits until no host is being stopped: every ended session's stop was confirmed. */
async function hostsSettled(): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  while ((await store.hosts.list()).some((host) => host.stoppingSessionId !== null || host.health !== "serving")) {
    if (Date.now() > deadline) throw new Error("hosts did not settle");
    await sleep(50);
  }
}

async function endedSession(id: string): Promise<Record<string, unknown>> {
  return (await kernel.browsers.retrieve(id, { include_deleted: true } as never)) as unknown as Record<string, unknown>;
}

function pressKey(id: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${gateway.url}/browsers/${id}/computer/press_key`, {
    method: "POST",
    headers: { authorization: `Bearer ${kernel.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

beforeAll(async () => {
  pageServer = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(PAGE));
  await new Promise<void>((resolve) => pageServer.listen(0, "127.0.0.1", resolve));
  pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`;
  dataDir = mkdtempSync(join(tmpdir(), "browser-sessions-"));
  const [first, second] = await Promise.all([startBrowserAgent(), startBrowserAgent()]);
  store = await openStore({ sqlitePath: sqlitePathIn(dataDir) });
  gateway = await startGatewayProcess({
    DATA_DIR: dataDir,
    HOST_AGENTS: `${first?.address},${second?.address}`,
    HOST_CHECK_INTERVAL_MS: "200",
  });
  const { key } = await createApiKey(store, "org-browser-sessions", "browser sessions");
  kernel = new Kernel({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(browsers.map((browser) => browser.close()));
  await gateway?.stop();
  await Promise.allSettled(agents.map((agent) => agent.stop()));
  await store?.close();
  await new Promise<void>((resolve) => pageServer?.close(() => resolve()));
  rmSync(dataDir, { recursive: true, force: true });
  console.info(`browser session figures: ${JSON.stringify(figures)}`);
});

describe("every browser session gets its own fresh Chromium", { timeout: 6 * STEP_TIMEOUT_MS }, () => {
  it("gives two concurrent sessions their own browsers, and a later session on the same host none of the first's state", async () => {
    const one = await kernel.browsers.create({ timeout_seconds: 600 });
    const two = await kernel.browsers.create({ timeout_seconds: 600 });
    expect(one.cdp_ws_url).toMatch(
      new RegExp(`^ws://127\\.0\\.0\\.1:${gateway.port}/browsers/${one.session_id}/cdp\\?token=`),
    );
    expect(two.cdp_ws_url).not.toBe(one.cdp_ws_url);
    expect(one).toMatchObject({ headless: false, viewport: { width: 1024, height: 768 } });
    const oneHost = await hostOf(one);
    expect(oneHost).toBeDefined();
    expect(await hostOf(two)).not.toBe(oneHost);

    const page = await openPage(await connect(one));
    await page.context().addCookies([{ name: "left", value: "behind", url: pageUrl }]);
    await page.evaluate(() =>
      (globalThis as unknown as { localStorage: Storage }).localStorage.setItem("left", "behind"),
    );
    // Session two sees none of it while both run.
    const twoPage = await openPage(await connect(two));
    expect(await twoPage.context().cookies(pageUrl)).toEqual([]);

    await kernel.browsers.deleteByID(one.session_id);
    // The old URL reaches no browser any more.
    await expect(playwright.connectOverCDP(one.cdp_ws_url, { timeout: 5_000 })).rejects.toThrow();
    await hostsSettled();

    // The only idle host is the one session one had.
    const three = await kernel.browsers.create({ timeout_seconds: 600 });
    expect(await hostOf(three)).toBe(oneHost);
    const browser = await connect(three);
    const pages = browser.contexts().flatMap((context) => context.pages());
    expect(pages.map((p) => p.url())).toEqual(["about:blank"]);
    const fresh = await openPage(browser);
    expect(await fresh.context().cookies(pageUrl)).toEqual([]);
    expect(
      await fresh.evaluate(() => (globalThis as unknown as { localStorage: Storage }).localStorage.getItem("left")),
    ).toBeNull();

    await kernel.browsers.deleteByID(two.session_id);
    await kernel.browsers.deleteByID(three.session_id);
    await hostsSettled();
  });

  it("types keys pressed through the API into the session's own page, never into another session's", async () => {
    const one = await kernel.browsers.create({ timeout_seconds: 600 });
    const two = await kernel.browsers.create({ timeout_seconds: 600 });
    const onePage = await openPage(await connect(one));
    const twoPage = await openPage(await connect(two));
    await kernel.browsers.computer.pressKey(one.session_id, { keys: ["h", "i"] });
    await expect.poll(() => onePage.locator("#typed").inputValue(), { timeout: STEP_TIMEOUT_MS }).toBe("hi");
    await kernel.browsers.computer.pressKey(two.session_id, { keys: ["shift+1"] });
    await expect.poll(() => twoPage.locator("#typed").inputValue(), { timeout: STEP_TIMEOUT_MS }).toBe("!");
    expect(await onePage.locator("#typed").inputValue()).toBe("hi");
    await kernel.browsers.deleteByID(one.session_id);
    await kernel.browsers.deleteByID(two.session_id);
    await hostsSettled();
  });

  it("lets no key or lock of a deleted session reach the next session on its host, and serves the next one at once", async () => {
    // One host is held for the whole test, so that session B lands where session A was.
    const holder = await kernel.browsers.create({ timeout_seconds: 600 });
    const a = await kernel.browsers.create({ timeout_seconds: 600 });
    const host = await hostOf(a);
    const agent = agents.find((candidate) => candidate.address === host);
    if (!agent) throw new Error(`no agent at ${host}`);
    await openPage(await connect(a));
    // A lock outlives the press that set it: the fence must turn it off, or B would type capitals.
    expect((await pressKey(a.session_id, { keys: ["Caps_Lock"] })).status).toBe(200);

    const holdStarted = performance.now();
    const hold = pressKey(a.session_id, { keys: ["a"], duration: 8_000 });
    await sleep(500);
    const queued = Array.from({ length: 5 }, () => pressKey(a.session_id, { keys: ["b", "c"] }));
    await sleep(300);
    const deleteStarted = performance.now();
    await kernel.browsers.deleteByID(a.session_id);
    figures.deleteDuringHoldMs = Math.round(performance.now() - deleteStarted);
    // The hold was cut short and the presses queued behind it dropped: none of them answers success.
    for (const res of await Promise.all([hold, ...queued])) {
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: "not_found" });
    }
    expect(performance.now() - holdStarted).toBeLessThan(8_000);
    await hostsSettled();

    const b = await kernel.browsers.create({ timeout_seconds: 600 });
    expect(await hostOf(b)).toBe(host);
    const page = await openPage(await connect(b));
    await sleep(1_000);
    expect(await page.locator("#typed").inputValue()).toBe("");
    const { display, xauthority } = await displayOf(agent);
    // The agent's display admits only clients with its cookie.
    delete process.env.XAUTHORITY;
    await expect(X11Connection.open(display)).rejects.toThrow();
    process.env.XAUTHORITY = xauthority;
    const x = await X11Connection.open(display);
    try {
      expect([...(await x.queryKeymap())].every((byte) => byte === 0)).toBe(true);
    } finally {
      await x.close();
    }
    const started = performance.now();
    expect((await pressKey(b.session_id, { keys: ["z"] })).status).toBe(200);
    figures.nextSessionFirstPressMs = Math.round(performance.now() - started);
    expect(figures.nextSessionFirstPressMs).toBeLessThan(1_000);
    await expect.poll(() => page.locator("#typed").inputValue(), { timeout: STEP_TIMEOUT_MS }).toBe("z");

    await kernel.browsers.deleteByID(b.session_id);
    await kernel.browsers.deleteByID(holder.session_id);
    await hostsSettled();
  });

  it("ends the session within 2 s when its Chromium is killed, and gives the next session a working browser", async () => {
    const session = await kernel.browsers.create({ timeout_seconds: 600 });
    const browser = await connect(session);
    const cdp = await browser.newBrowserCDPSession();
    const info = (await cdp.send("SystemInfo.getProcessInfo")) as { processInfo: { type: string; id: number }[] };
    const pid = info.processInfo.find((process) => process.type === "browser")?.id;
    if (!pid) throw new Error("Chromium reported no browser process");
    const killedAt = performance.now();
    process.kill(pid, "SIGKILL");
    let ended: Record<string, unknown> = {};
    while (!ended.deleted_at) {
      if (performance.now() - killedAt > 2_000) throw new Error("the session did not end within 2 s");
      ended = await endedSession(session.session_id);
      if (!ended.deleted_at) await sleep(50);
    }
    figures.killedBrowserSessionEndedMs = Math.round(performance.now() - killedAt);
    expect(ended.end_reason).toMatch(/browser was killed by SIGKILL/);
    await hostsSettled();

    const next = await kernel.browsers.create({ timeout_seconds: 600 });
    const page = await openPage(await connect(next));
    expect(page.url()).toBe(pageUrl);
    await kernel.browsers.deleteByID(next.session_id);
    await hostsSettled();
  });

  it("leaves nothing of a session behind when its agent is SIGKILLed and restarted, and then serves a new session", async () => {
    const agentDataDir = mkdtempSync(join(tmpdir(), "killed-agent-"));
    const env = { AGENT_LISTEN: `127.0.0.1:${await freePort()}`, AGENT_DATA_DIR: agentDataDir };
    const first = await startBrowserAgent(env);
    let second: AgentProcess | undefined;
    // The other hosts are held, so the session lands on this agent.
    const held: Kernel.BrowserCreateResponse[] = [];
    for (let i = 0; i < 2; i++) {
      held.push(
        await kernel.browsers.create({ timeout_seconds: 600 }).catch(async (error) => {
          throw new Error(`${error}: hosts ${JSON.stringify(await store.hosts.list())}`);
        }),
      );
    }
    try {
      expect(await store.hosts.register(first.address, new Date().toISOString())).toBe(true);
      await hostsSettled();
      const session = await kernel.browsers.create({ timeout_seconds: 600 });
      expect(await hostOf(session)).toBe(first.address);
      const browser = await connect(session);
      const cdp = await browser.newBrowserCDPSession();
      const info = (await cdp.send("SystemInfo.getProcessInfo")) as { processInfo: { type: string; id: number }[] };
      const pid = info.processInfo.find((process) => process.type === "browser")?.id as number;
      const sessionDirs = readdirSync(join(agentDataDir, "browsers"));
      expect(sessionDirs.length).toBeGreaterThan(0);

      // The browser and its helpers (zygotes, renderers, GPU process): its process group.
      const group = processGroup(pid);
      expect(group.length).toBeGreaterThan(1);
      await first.stop("SIGKILL");
      // The browser outlived its agent for now: only the next agent on this data directory can end it.
      expect(running(pid)).toBe(true);
      second = await startBrowserAgent(env);
      await second.waitForLog((line) => line.msg === "killed processes an earlier run of this agent left behind");
      expect(group.filter(running)).toEqual([]);
      for (const dir of sessionDirs) {
        expect(existsSync(join(agentDataDir, "browsers", dir))).toBe(false);
        expect(existsSync(join(tmpRoot(agentDataDir), dir))).toBe(false);
      }

      // The gateway finds the restarted agent runs none of the old session, ends it, and uses the host again.
      let ended: Record<string, unknown> = {};
      const deadline = Date.now() + STEP_TIMEOUT_MS;
      while (!ended.deleted_at) {
        if (Date.now() > deadline) throw new Error("the session on the killed agent did not end");
        ended = await endedSession(session.session_id);
        if (!ended.deleted_at) await sleep(100);
      }
      expect(ended.end_reason).toBe("the host agent restarted");
      await hostsSettled();
      const next = await kernel.browsers.create({ timeout_seconds: 600 });
      expect(await hostOf(next)).toBe(first.address);
      await openPage(await connect(next));
      await kernel.browsers.deleteByID(next.session_id);
    } finally {
      for (const session of held) await kernel.browsers.deleteByID(session.session_id).catch(() => undefined);
      await hostsSettled();
      // The agent owns its data directory while it runs.
      await second?.stop();
      rmSync(agentDataDir, { recursive: true, force: true });
    }
  });
});
