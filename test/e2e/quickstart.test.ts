import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type Kernel from "@onkernel/sdk";
import { chromium as playwright } from "playwright-core";
import puppeteer from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUICKSTART_READY_TIMEOUT_MS, type Quickstart, startQuickstart } from "../support/quickstart.ts";

/**
 * `npm start` as a new user runs it: QUICKSTART_BROWSERS agents, each with its own Xvfb and
 * Chromium, the session `local` on one of them, and the official client working with what it
 * prints. Ctrl-C ends every process it started.
 */

let quickstart: Quickstart | undefined;
let dataDir: string;
let child: ChildProcess;
let kernel: Kernel;
/** A form served on loopback that echoes what is posted to it. */
let formServer: Server;
let formUrl: string;

const FORM = `<!doctype html><html><head><meta charset="utf-8"><title>form</title></head>
<body><form method="post" action="/echo"><input id="name" name="name"><button id="send">Send</button></form></body></html>`;

const NOBODY = 65534;

/** Connects to a Unix socket from a process of user `uid` (this one's when undefined): "connected" or the error code. */
async function connectAs(uid: number | undefined, path: string): Promise<string> {
  const script = `require("node:net").connect(process.argv[1])
    .on("connect", () => { console.log("connected"); process.exit(0); })
    .on("error", (error) => { console.log(error.code); process.exit(0); });`;
  const probe = spawn(process.execPath, ["-e", script, path], {
    stdio: ["ignore", "pipe", "inherit"],
    ...(uid !== undefined && { uid, gid: uid }),
  });
  let out = "";
  probe.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8");
  });
  await once(probe, "close");
  return out.trim();
}

/** Processes that carry one of the quick start's agent data directories as their marker. */
function markedProcesses(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const environ = readFileSync(`/proc/${name}/environ`, "utf8");
      if (environ.includes(`BROWSER_INFRA_AGENT_DATA_DIR=${dataDir}/`)) pids.push(Number(name));
    } catch {
      // Gone, or not readable.
    }
  }
  return pids;
}

beforeAll(async () => {
  formServer = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString("utf8");
    });
    req.on("end", () => {
      const name = new URLSearchParams(body).get("name")?.replace(/[<&]/g, "") ?? "";
      res
        .writeHead(200, { "content-type": "text/html" })
        .end(req.method === "POST" ? `<p id="out">hello ${name}</p>` : FORM);
    });
  });
  await new Promise<void>((resolve) => formServer.listen(0, "127.0.0.1", resolve));
  formUrl = `http://127.0.0.1:${(formServer.address() as AddressInfo).port}/`;
  quickstart = await startQuickstart("quickstart", { QUICKSTART_BROWSERS: "2" });
  ({ kernel, dataDir, child } = quickstart);
}, QUICKSTART_READY_TIMEOUT_MS + 10_000);

afterAll(async () => {
  await quickstart?.stop();
  await new Promise<void>((resolve) => formServer?.close(() => resolve()));
});

describe("npm start", { timeout: 60_000 }, () => {
  it("prints a session local with a browser of its own, and a second session right after gets another", async () => {
    const local = await kernel.browsers.retrieve("local");
    // Printed with the token of its creation; every read of the session carries a fresh one.
    expect(quickstart?.output()).toContain(local.cdp_ws_url.split("?")[0]);
    const second = await kernel.browsers.create({});
    expect(second.cdp_ws_url).not.toBe(local.cdp_ws_url);
    for (const session of [local, second]) {
      const browser = await playwright.connectOverCDP(session.cdp_ws_url);
      expect(
        browser
          .contexts()[0]
          ?.pages()
          .map((page) => page.url()),
      ).toEqual(["about:blank"]);
    }
    await kernel.browsers.deleteByID(second.session_id);
  });

  it("lets Playwright and Puppeteer drive a session the official client created, through its cdp_ws_url", async () => {
    const session = await kernel.browsers.create({});
    const browser = await playwright.connectOverCDP(session.cdp_ws_url);
    try {
      const page = browser.contexts()[0]?.pages()[0];
      if (!page) throw new Error("the session's browser has no tab");
      await page.goto(formUrl);
      await page.fill("#name", "playwright");
      await page.click("#send");
      await expect.poll(() => page.locator("#out").textContent()).toBe("hello playwright");
    } finally {
      await browser.close();
    }

    const puppet = await puppeteer.connect({ browserWSEndpoint: session.cdp_ws_url, defaultViewport: null });
    try {
      const page = await puppet.newPage();
      await page.goto(formUrl);
      await page.type("#name", "puppeteer");
      await Promise.all([page.waitForNavigation(), page.click("#send")]);
      expect(await page.$eval("#out", (element) => element.textContent)).toBe("hello puppeteer");
    } finally {
      await puppet.disconnect();
    }
    await kernel.browsers.deleteByID(session.session_id);
  });

  it("lets no other local user reach its agents: they listen on Unix sockets in a private directory", async () => {
    const sockets = join(dataDir, "sockets");
    expect(statSync(sockets).mode & 0o777).toBe(0o700);
    const socket = join(sockets, "host-agent-1.sock");
    expect(quickstart?.output()).toContain(`unix:${socket}`);
    expect(await connectAs(undefined, socket)).toBe("connected");
    // Another user (nobody) cannot even open the socket. Only root can act as another user; as
    // anyone else the private directory above is what keeps them out.
    if (process.getuid?.() === 0) expect(await connectAs(NOBODY, socket)).toBe("EACCES");
  });

  it("stops every process it started on Ctrl-C", async () => {
    expect(markedProcesses().length).toBeGreaterThan(0);
    const exited = once(child, "exit");
    // Ctrl-C reaches the whole foreground process group; the quick start leads its own here.
    process.kill(-(child.pid as number), "SIGINT");
    const [code] = await exited;
    expect(code).toBe(0);
    expect(markedProcesses()).toEqual([]);
  });
});
