import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import Kernel from "@onkernel/sdk";
import { type Browser, chromium as playwright } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createApiKey } from "../../packages/gateway/src/auth/api-keys.ts";
import { openStore, type Store, sqlitePathIn } from "../../packages/gateway/src/store/store.ts";
import { DEFAULT_CHROMIUM_PATH as CHROMIUM_PATH } from "../../packages/host-agent/src/config.ts";
import { type AgentProcess, type GatewayProcess, startAgent, startGatewayProcess } from "../support/processes.ts";
import { sampleValue, scrape } from "../support/prometheus.ts";
import { parseRawResponse, rawExchange } from "../support/raw-http.ts";

/**
 * CDP through the gateway: a session's cdp_ws_url is a WebSocket on the gateway that only the
 * session's token opens, that any replica serves, that carries CDP as if it were Chromium's own
 * socket, and that closes when the session ends however it ends. Two replicas share one store;
 * the agents run headless Chromium.
 */

const STEP_TIMEOUT_MS = 15_000;
/** How often gateway one pings its CDP sockets: short, so a silent client is cut off within the test. */
const PING_INTERVAL_MS = 500;

const FORM = `<!doctype html>
<html><head><meta charset="utf-8"><title>form</title></head>
<body><form method="post" action="/echo"><input id="name" name="name"><button id="send">Send</button></form></body>
</html>`;

let pageServer: Server;
let pageUrl: string;
let dataDir: string;
let store: Store;
let one: GatewayProcess;
let two: GatewayProcess;
let kernel: Kernel;
let apiKey: string;
const agents: AgentProcess[] = [];
/** Each agent's data directory, where its browsers' profiles are. */
const agentDataDirs = new Map<AgentProcess, string>();
const browsers: Browser[] = [];

async function startBrowserAgent(): Promise<AgentProcess> {
  const agentDataDir = mkdtempSync(join(tmpdir(), "cdp-agent-"));
  const agent = await startAgent({ AGENT_CHROMIUM_PATH: CHROMIUM_PATH, AGENT_DATA_DIR: agentDataDir });
  agents.push(agent);
  agentDataDirs.set(agent, agentDataDir);
  return agent;
}

async function connect(url: string): Promise<Browser> {
  const browser = await playwright.connectOverCDP(url, { timeout: STEP_TIMEOUT_MS });
  browsers.push(browser);
  return browser;
}

/** Resolves with the time Playwright saw its connection close. */
function disconnected(browser: Browser): Promise<number> {
  return new Promise((resolve) => browser.once("disconnected", () => resolve(Date.now())));
}

/** The URL on another replica: same path and token, that replica's origin. */
function on(gateway: GatewayProcess, url: string): string {
  const moved = new URL(url);
  moved.port = String(gateway.port);
  return moved.toString();
}

type Upgrade = { status: number; body: { code: string; message: string } } | { socket: WebSocket };

/** Tries the WebSocket handshake: the refusal's status and Error body, or the open socket. */
function upgrade(url: string, options: WebSocket.ClientOptions = {}): Promise<Upgrade> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, options);
    socket.once("open", () => resolve({ socket }));
    socket.once("unexpected-response", (_req, res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    socket.once("error", reject);
  });
}

async function refusal(url: string): Promise<{ status: number; code: string; message: string }> {
  const outcome = await upgrade(url);
  if ("socket" in outcome) {
    outcome.socket.terminate();
    throw new Error(`${url} was not refused`);
  }
  return { status: outcome.status, ...outcome.body };
}

/** Sends one CDP command on a raw socket and resolves with its answer. */
function command(socket: WebSocket, id: number, method: string): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const onMessage = (data: Buffer) => {
      const message = JSON.parse(data.toString("utf8")) as Record<string, unknown>;
      if (message.id !== id) return;
      socket.off("message", onMessage);
      resolve(message);
    };
    socket.on("message", onMessage);
    socket.send(JSON.stringify({ id, method }));
  });
}

function closed(socket: WebSocket): Promise<{ code: number; reason: string; at: number }> {
  return new Promise((resolve) =>
    socket.once("close", (code, reason) => resolve({ code, reason: reason.toString("utf8"), at: Date.now() })),
  );
}

/** The running browser process (its process group's leader) of an agent, found by its data directory. */
function browserPid(agentDataDir: string): number | undefined {
  for (const name of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    try {
      const command = readFileSync(`/proc/${name}/cmdline`, "utf8");
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const pgid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      if (command.includes(`--user-data-dir=${agentDataDir}`) && pgid === Number(name)) return Number(name);
    } catch {
      // Gone meanwhile.
    }
  }
  return undefined;
}

/** A session, ended or not, with this service's end_reason (the SDK's type has no such field). */
async function endedSession(id: string): Promise<{ end_reason?: string; deleted_at?: string; cdp_ws_url: string }> {
  return (await kernel.browsers.retrieve(id, { include_deleted: true } as never)) as never;
}

async function hostOf(sessionId: string): Promise<string | undefined> {
  return (await store.hosts.list()).find((host) => host.sessionId === sessionId)?.address;
}

/** Waits until every host is serving and idle: the previous session's stop was confirmed. */
async function hostsIdle(): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  while (
    (await store.hosts.list()).some(
      (host) => host.sessionId !== null || host.stoppingSessionId !== null || host.health !== "serving",
    )
  ) {
    if (Date.now() > deadline) throw new Error("hosts did not become idle");
    await sleep(50);
  }
}

beforeAll(async () => {
  pageServer = createServer((req, res) => {
    if (req.method === "POST") {
      let body = "";
      req.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8");
      });
      req.on("end", () => {
        const name = new URLSearchParams(body).get("name") ?? "";
        res.writeHead(200, { "content-type": "text/html" }).end(`<p id="out">hello ${name.replace(/[<&]/g, "")}</p>`);
      });
      return;
    }
    res.writeHead(200, { "content-type": "text/html" }).end(FORM);
  });
  await new Promise<void>((resolve) => pageServer.listen(0, "127.0.0.1", resolve));
  pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`;
  dataDir = mkdtempSync(join(tmpdir(), "cdp-"));
  const [first, second] = await Promise.all([startBrowserAgent(), startBrowserAgent()]);
  const env = {
    DATA_DIR: dataDir,
    HOST_AGENTS: `${first?.address},${second?.address}`,
    HOST_CHECK_INTERVAL_MS: "200",
    IDLE_CHECK_INTERVAL_MS: "200",
  };
  one = await startGatewayProcess({ ...env, CDP_PING_INTERVAL_MS: String(PING_INTERVAL_MS) });
  // The second replica shares the first's store and its SECRETS_KEY (DATA_DIR/secrets.key).
  two = await startGatewayProcess(env);
  store = await openStore({ sqlitePath: sqlitePathIn(dataDir) });
  ({ key: apiKey } = await createApiKey(store, "org-cdp", "cdp"));
  kernel = new Kernel({ apiKey, baseURL: one.url, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(browsers.map((browser) => browser.close()));
  await Promise.allSettled([one?.stop(), two?.stop()]);
  await Promise.allSettled(agents.map((agent) => agent.stop()));
  await store?.close();
  await new Promise<void>((resolve) => pageServer?.close(() => resolve()));
  for (const dir of [dataDir, ...agentDataDirs.values()]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("CDP through the gateway", { timeout: 6 * STEP_TIMEOUT_MS }, () => {
  it("hands out a URL on the gateway that Playwright drives like Chromium's own, with several clients at once", async () => {
    const session = await kernel.browsers.create({ timeout_seconds: 600 });
    expect(session.cdp_ws_url).toMatch(
      new RegExp(`^ws://127\\.0\\.0\\.1:${one.port}/browsers/${session.session_id}/cdp\\?token=[\\w-]+\\.[\\w-]+$`),
    );
    const browser = await connect(session.cdp_ws_url);
    const page = browser.contexts()[0]?.pages()[0];
    if (!page) throw new Error("the session's browser has no tab");
    await page.goto(pageUrl);
    await page.fill("#name", "gateway");
    await page.click("#send");
    await expect.poll(() => page.locator("#out").textContent(), { timeout: STEP_TIMEOUT_MS }).toBe("hello gateway");

    // A second client on the same session (a screencast viewer, say) has a connection of its own.
    const viewer = await connect(session.cdp_ws_url);
    expect(
      viewer
        .contexts()[0]
        ?.pages()
        .map((p) => p.url()),
    ).toEqual([`${pageUrl}echo`]);
    await viewer.close();
    // Closing one client leaves the other working.
    expect(await page.locator("#out").textContent()).toBe("hello gateway");

    await kernel.browsers.deleteByID(session.session_id);
  });

  it("is accepted by another replica of the gateway", async () => {
    await hostsIdle();
    const session = await kernel.browsers.create({ timeout_seconds: 600 });
    const browser = await connect(on(two, session.cdp_ws_url));
    expect(browser.version()).toMatch(/^\d+\./);
    const ended = disconnected(browser);
    // Deleted through the first replica: the second one's socket closes all the same.
    await kernel.browsers.deleteByID(session.session_id);
    const deletedAt = Date.now();
    expect((await ended) - deletedAt).toBeLessThan(2_000);
  });

  it("refuses an upgrade without the session's own token, with the Error body", async () => {
    await hostsIdle();
    const a = await kernel.browsers.create({ timeout_seconds: 600 });
    const b = await kernel.browsers.create({ timeout_seconds: 600 });
    const url = new URL(a.cdp_ws_url);
    const token = url.searchParams.get("token") as string;
    const at = (path: string, query: string) => `ws://127.0.0.1:${one.port}${path}${query}`;
    const aPath = `/browsers/${a.session_id}/cdp`;
    const bPath = `/browsers/${b.session_id}/cdp`;

    expect(await refusal(at(aPath, ""))).toMatchObject({ status: 401, code: "unauthorized" });
    // One character of the payload changed: the signature no longer matches.
    const tampered = `${token[0] === "A" ? "B" : "A"}${token.slice(1)}`;
    expect(await refusal(at(aPath, `?token=${tampered}`))).toMatchObject({ status: 401, code: "unauthorized" });
    expect(await refusal(at(aPath, `?token=${apiKey}`))).toMatchObject({ status: 401, code: "unauthorized" });
    expect(await refusal(at(bPath, `?token=${token}`))).toMatchObject({ status: 404, code: "not_found" });
    // Any other path is no WebSocket endpoint: the API answers it, and a token is no API key.
    expect(await refusal(at("/browsers", `?token=${token}`))).toMatchObject({ status: 401, code: "unauthorized" });

    // Not a WebSocket handshake, token or not: refused before the agent opens anything.
    const post = parseRawResponse(
      (
        await rawExchange(
          one.port,
          `POST ${aPath}?token=${token} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
            "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nContent-Length: 0\r\n\r\n",
        )
      ).text,
    );
    expect(post.status).toBe(400);
    expect(JSON.parse(post.body)).toMatchObject({ code: "invalid_request" });
    // Another Upgrade header (HTTP/2 cleartext) on an API path is the plain request it also is.
    const h2c = parseRawResponse(
      (
        await rawExchange(
          one.port,
          `GET /browsers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\n` +
            "Connection: Upgrade, HTTP2-Settings, close\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n",
        )
      ).text,
    );
    expect(h2c.status).toBe(200);

    // B's own URL opens; A's token, once A ended, opens nothing.
    const opened = await upgrade(b.cdp_ws_url);
    if (!("socket" in opened)) throw new Error(`B's own URL was refused: ${JSON.stringify(opened)}`);
    expect(await command(opened.socket, 1, "Browser.getVersion")).toMatchObject({ id: 1, result: {} });
    opened.socket.close();
    await kernel.browsers.deleteByID(a.session_id);
    expect(await refusal(a.cdp_ws_url)).toMatchObject({ status: 404, code: "not_found" });
    // An ended session has no URL to hand out.
    expect((await endedSession(a.session_id)).cdp_ws_url).toBe("");
    await kernel.browsers.deleteByID(b.session_id);
  });

  it("closes every socket of a session when it is deleted, within 2 s, with a close code and reason", async () => {
    await hostsIdle();
    const session = await kernel.browsers.create({ timeout_seconds: 600 });
    const playwrightEnded = disconnected(await connect(session.cdp_ws_url));
    // On the other replica: the reason reaches it through the agent's fence.
    const opened = await upgrade(on(two, session.cdp_ws_url));
    if (!("socket" in opened)) throw new Error("the URL was refused");
    const rawEnded = closed(opened.socket);
    await kernel.browsers.deleteByID(session.session_id);
    const deletedAt = Date.now();
    expect((await playwrightEnded) - deletedAt).toBeLessThan(2_000);
    const raw = await rawEnded;
    expect(raw.at - deletedAt).toBeLessThan(2_000);
    expect(raw.code).toBe(1001);
    expect(raw.reason).toContain("deleted");
  });

  it("closes them when the session reaches its idle timeout", async () => {
    await hostsIdle();
    const session = await kernel.browsers.create({ timeout_seconds: 10 });
    const ended = disconnected(await connect(session.cdp_ws_url));
    const at = await ended;
    const record = await endedSession(session.session_id);
    expect(record).toMatchObject({ end_reason: "idle timeout" });
    expect(at - Date.parse(record.deleted_at as string)).toBeLessThan(2_000);
  });

  it("closes them when the session's Chromium is killed", async () => {
    await hostsIdle();
    const session = await kernel.browsers.create({ timeout_seconds: 600 });
    const ended = disconnected(await connect(session.cdp_ws_url));
    const host = await hostOf(session.session_id);
    const agent = agents.find((candidate) => candidate.address === host);
    const agentDataDir = agent && agentDataDirs.get(agent);
    if (!agentDataDir) throw new Error(`no agent at ${host}`);
    const pid = browserPid(agentDataDir);
    if (pid === undefined) throw new Error("the session's browser process was not found");
    process.kill(pid, "SIGKILL");
    const killedAt = Date.now();
    expect((await ended) - killedAt).toBeLessThan(2_000);
    await expect
      .poll(async () => (await endedSession(session.session_id)).end_reason, {
        timeout: STEP_TIMEOUT_MS,
      })
      .toContain("SIGKILL");
  });

  it("keeps a session driven only over CDP active past 3 × its timeout", { timeout: 60_000 }, async () => {
    await hostsIdle();
    const session = await kernel.browsers.create({ timeout_seconds: 10 });
    const browser = await connect(session.cdp_ws_url);
    const cdp = await browser.newBrowserCDPSession();
    const until = Date.now() + 31_000;
    while (Date.now() < until) {
      await cdp.send("Browser.getVersion");
      await sleep(2_000);
    }
    const record = await kernel.browsers.retrieve(session.session_id);
    expect(record.deleted_at).toBeUndefined();
    await kernel.browsers.deleteByID(session.session_id);
  });

  it("cuts off a socket that does not answer pings, and keeps one that does", async () => {
    await hostsIdle();
    const session = await kernel.browsers.create({ timeout_seconds: 600 });
    const silent = await upgrade(session.cdp_ws_url, { autoPong: false });
    const answering = await upgrade(session.cdp_ws_url);
    if (!("socket" in silent) || !("socket" in answering)) throw new Error("the URL was refused");
    const silentClosed = closed(silent.socket);
    const openedAt = Date.now();
    // Closed at the second ping after the one it did not answer.
    const { code } = await silentClosed;
    expect(code).toBe(1006);
    expect(Date.now() - openedAt).toBeLessThan(4 * PING_INTERVAL_MS + 1_000);
    await sleep(3 * PING_INTERVAL_MS);
    expect(answering.socket.readyState).toBe(WebSocket.OPEN);
    expect(await command(answering.socket, 7, "Browser.getVersion")).toMatchObject({ id: 7 });
    answering.socket.close();
    await kernel.browsers.deleteByID(session.session_id);
  });

  it("counts sockets, bytes each way and close reasons in /metrics", async () => {
    const metrics = await scrape(`${one.url}/metrics`);
    expect(sampleValue(metrics, "gateway_cdp_sockets", {})).toBe(0);
    expect(sampleValue(metrics, "gateway_cdp_bytes_total", { direction: "to_browser" })).toBeGreaterThan(0);
    expect(sampleValue(metrics, "gateway_cdp_bytes_total", { direction: "to_client" })).toBeGreaterThan(0);
    expect(sampleValue(metrics, "gateway_cdp_closes_total", { reason: "session_ended" })).toBeGreaterThan(0);
    expect(sampleValue(metrics, "gateway_cdp_closes_total", { reason: "ping_timeout" })).toBe(1);
    expect(sampleValue(metrics, "gateway_cdp_refusals_total", { status: "401" })).toBe(3);
  });

  it("answers 502 when the session's host agent cannot be reached", async () => {
    await hostsIdle();
    const extra = await startBrowserAgent();
    await store.hosts.register(extra.address, new Date().toISOString());
    // Every other host busy, so the next session lands on the extra one once it is checked.
    const busy = [
      await kernel.browsers.create({ timeout_seconds: 600 }),
      await kernel.browsers.create({ timeout_seconds: 600 }),
    ];
    let session: Kernel.BrowserCreateResponse | undefined;
    await expect
      .poll(
        async () => {
          session ??= await kernel.browsers.create({ timeout_seconds: 600 }).catch(() => undefined);
          return session && (await hostOf(session.session_id));
        },
        { timeout: STEP_TIMEOUT_MS },
      )
      .toBe(extra.address);
    const agentDataDir = agentDataDirs.get(extra) as string;
    // Killed outright: its browser is left behind until an agent claims the data directory again.
    await extra.stop("SIGKILL");
    const refused = await refusal((session as Kernel.BrowserCreateResponse).cdp_ws_url);
    expect(refused).toMatchObject({ status: 502, code: "host_unavailable" });
    expect(refused.message).not.toContain("token");
    const again = await startAgent({
      AGENT_CHROMIUM_PATH: "none",
      AGENT_DATA_DIR: agentDataDir,
      AGENT_LISTEN: extra.address,
    });
    agents.push(again);
    expect(browserPid(agentDataDir)).toBeUndefined();
    for (const { session_id } of busy) await kernel.browsers.deleteByID(session_id);
    // The restarted agent ends the session it lost; then its host (without a browser) leaves the pool.
    await expect
      .poll(() => store.hosts.remove(extra.address), { timeout: STEP_TIMEOUT_MS, interval: 200 })
      .toBe("removed");
  });

  it("closes its sockets with 1001 when the gateway shuts down, and exits promptly", async () => {
    await hostsIdle();
    const three = await startGatewayProcess({
      DATA_DIR: dataDir,
      HOST_AGENTS: agents
        .slice(0, 2)
        .map((agent) => agent.address)
        .join(","),
    });
    const session = await kernel.browsers.create({ timeout_seconds: 600 });
    const opened = await upgrade(on(three, session.cdp_ws_url));
    if (!("socket" in opened)) throw new Error("the URL was refused");
    const ended = closed(opened.socket);
    const stopping = Date.now();
    expect(await three.stop()).toBe(0);
    expect(Date.now() - stopping).toBeLessThan(5_000);
    expect(await ended).toMatchObject({ code: 1001, reason: "the gateway is shutting down" });
    await kernel.browsers.deleteByID(session.session_id);
  });
});
