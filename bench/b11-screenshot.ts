import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { encodePng, pngSize } from "../packages/host-agent/src/screenshot/png.ts";
import { XScreen } from "../packages/host-agent/src/screenshot/x-screen.ts";
import { type BenchContext, type BenchOutcome, metric } from "./lib/bench.ts";
import { BROWSER_SCREEN, BROWSER_WINDOW } from "./lib/environment.ts";
import type { LatencySummary } from "./lib/load-spec.ts";
import { round } from "./lib/measure.ts";
import { withFocusedSession } from "./lib/sessions.ts";
import { summarize } from "./lib/stats.ts";

/** Quiet time before the measured rounds: the session's handover and the page's painting are done. */
const SETTLE_MS = 1_000;
/** Screenshots per leg before the measured rounds. */
const WARMUP = 3;
/** What a CDP client asks for by default (Playwright's and Puppeteer's page.screenshot()): a PNG of the viewport. */
const CDP_SCREENSHOT = { format: "png" } as const;
const KB = 1024;

/**
 * What the browser shows while every leg captures it: a documentation-like page (header with a
 * gradient, a column of links, paragraphs of text, cards with gradient images), so the PNGs
 * are those of a real desktop, neither blank nor noise.
 */
const DESKTOP_PAGE = `(() => {
  document.head.innerHTML = \`<style>
    body{font-family:sans-serif;margin:0;background:#fafafa;color:#222}
    header{background:linear-gradient(90deg,#2b5876,#4e4376);color:white;padding:20px 40px;font-size:28px}
    nav{float:left;width:240px;padding:20px;background:#eee;height:900px}
    nav a{display:block;color:#0366d6;margin:6px 0}
    main{margin-left:300px;padding:20px;max-width:1200px}
    .card{display:inline-block;width:260px;height:140px;margin:10px;border-radius:8px;box-shadow:0 2px 6px #0003;
          background:white;padding:10px;vertical-align:top}
  </style>\`;
  document.body.innerHTML = "<header>Example Dashboard — Search, Settings, Profile</header><nav></nav><main><h1>Getting started</h1></main>";
  const nav = document.querySelector("nav");
  const main = document.querySelector("main");
  const words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua".split(" ");
  const text = (n) => Array.from({ length: n }, (_, i) => words[(i * 7 + n) % words.length]).join(" ");
  for (let i = 0; i < 30; i++) {
    const a = document.createElement("a");
    a.href = "#";
    a.textContent = text(3 + (i % 4));
    nav.append(a);
  }
  for (let i = 0; i < 4; i++) {
    const p = document.createElement("p");
    p.textContent = text(80);
    main.append(p);
  }
  for (let i = 0; i < 8; i++) {
    const card = document.createElement("div");
    card.className = "card";
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = 60;
    const g = canvas.getContext("2d");
    const gradient = g.createRadialGradient(30, 30, 5, 30, 30, 30);
    gradient.addColorStop(0, \`hsl(\${i * 45},80%,70%)\`);
    gradient.addColorStop(1, \`hsl(\${i * 45 + 90},60%,30%)\`);
    g.fillStyle = gradient;
    g.fillRect(0, 0, 60, 60);
    card.append(canvas, document.createTextNode(text(20)));
    main.append(card);
  }
  return new Promise((resolve) =>
    requestAnimationFrame(() => requestAnimationFrame(() => resolve([innerWidth, innerHeight]))),
  );
})()`;

type LegName = "ours" | "cdp" | "shell" | "floor";

interface Leg {
  name: LegName;
  /** Takes one screenshot and resolves with the PNG. */
  take(): Promise<Buffer>;
}

/** `xwd -root | xwdtopnm | pnmtopng`, one shell per screenshot, as a tool that shells out would run it. */
function shellScreenshot(display: string, xauthority: string | undefined): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", `xwd -root -display ${display} | xwdtopnm 2>/dev/null | pnmtopng 2>/dev/null`], {
      env: { PATH: process.env.PATH, ...(xauthority && { XAUTHORITY: xauthority }) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const chunks: Buffer[] = [];
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    child.once("error", reject);
    child.once("close", (code) => {
      if (code === 0) resolve(Buffer.concat(chunks));
      else reject(new Error(`xwd | xwdtopnm | pnmtopng exited with ${code}: ${stderr.trim()}`));
    });
  });
}

/**
 * The agent's own capture and encoding code (XScreen: GetImage on a kept X connection; sharp),
 * run in the bench's process with nothing around it: no HTTP, gateway, gRPC or session checks.
 * Its X connection presents the agent's display cookie (node-x11 reads XAUTHORITY while it connects).
 */
async function floorLeg(display: string, xauthority: string | undefined): Promise<Leg> {
  const screen = new XScreen(display);
  const previous = process.env.XAUTHORITY;
  if (xauthority) process.env.XAUTHORITY = xauthority;
  try {
    await screen.capture({ x: 0, y: 0, width: 1, height: 1 }, async () => undefined);
  } finally {
    if (previous === undefined) delete process.env.XAUTHORITY;
    else process.env.XAUTHORITY = previous;
  }
  return { name: "floor", take: () => screen.capture(undefined, encodePng) };
}

/** The legs in the order round `r` runs them: each leg goes first in turn. */
function rotated<T>(legs: readonly T[], r: number): T[] {
  const shift = r % legs.length;
  return [...legs.slice(shift), ...legs.slice(0, shift)];
}

async function timed(leg: Leg, count: number): Promise<{ times: number[]; bytes: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const png = await leg.take();
    times.push(performance.now() - started);
    bytes += png.length;
  }
  return { times, bytes };
}

/**
 * B11: one screenshot at a time, from request to PNG bytes in hand: through the gateway
 * (POST /browsers/{id}/computer/screenshot: HTTP → gateway → gRPC → agent → X GetImage → sharp),
 * against Page.captureScreenshot on the same browser's own DevTools socket, against a shell-out per
 * screenshot (xwd | xwdtopnm | pnmtopng), and the floor: the agent's capture and encoding alone.
 */
export async function b11Screenshot(ctx: BenchContext): Promise<BenchOutcome> {
  const started = performance.now();
  const { env, settings, progress } = ctx;
  const gateway = await env.browserGateway();
  const { agent } = gateway;
  return withFocusedSession(gateway, async ({ session, spare, directUrl, open }) => {
    const direct = await open(directUrl);
    const { targetInfos } = await direct.send<{ targetInfos: { targetId: string; type: string }[] }>(
      "Target.getTargets",
    );
    const page = targetInfos.find((t) => t.type === "page");
    if (!page) throw new Error(`the session's browser has no page: ${JSON.stringify(targetInfos)}`);
    const { sessionId: pageSession } = await direct.send<{ sessionId: string }>("Target.attachToTarget", {
      targetId: page.targetId,
      flatten: true,
    });
    const drawn = await direct.send<{ result: { value: [number, number] } }>(
      "Runtime.evaluate",
      { expression: DESKTOP_PAGE, awaitPromise: true, returnByValue: true },
      pageSession,
    );
    const [viewportWidth, viewportHeight] = drawn.result.value;

    const oursUrl = `${gateway.process.url}/browsers/${session.session_id}/computer/screenshot`;
    const oursInit = {
      method: "POST",
      headers: { authorization: `Bearer ${gateway.apiKey}`, "content-type": "application/json", accept: "image/png" },
      body: "{}",
    };
    const legs: Leg[] = [
      {
        name: "ours",
        take: async () => {
          const response = await fetch(oursUrl, oursInit);
          const png = Buffer.from(await response.arrayBuffer());
          if (response.status !== 200) throw new Error(`screenshot answered ${response.status}: ${png.toString()}`);
          return png;
        },
      },
      {
        name: "cdp",
        take: async () =>
          Buffer.from(
            (await direct.send<{ data: string }>("Page.captureScreenshot", CDP_SCREENSHOT, pageSession)).data,
            "base64",
          ),
      },
      { name: "shell", take: () => shellScreenshot(agent.display, agent.xauthority) },
      await floorLeg(agent.display, agent.xauthority),
    ];

    // One of each, checked: ours, the shell's and the floor's are the screen, CDP's the page's viewport.
    const sizes = {} as Record<LegName, { width: number; height: number; bytes: number }>;
    for (const leg of legs) {
      const png = await leg.take();
      sizes[leg.name] = { ...pngSize(png), bytes: png.length };
    }
    for (const name of ["ours", "shell", "floor"] as const) {
      const { width, height } = sizes[name];
      if (width !== BROWSER_WINDOW.width || height !== BROWSER_WINDOW.height) {
        throw new Error(`${name}: a ${width}×${height} screenshot of a ${BROWSER_SCREEN} screen`);
      }
    }
    if (sizes.cdp.width !== viewportWidth || sizes.cdp.height !== viewportHeight) {
      throw new Error(
        `cdp: a ${sizes.cdp.width}×${sizes.cdp.height} screenshot of a ${viewportWidth}×${viewportHeight} page`,
      );
    }
    progress(`B11: ${WARMUP} warm-up screenshots per leg`);
    for (const leg of legs) await timed(leg, WARMUP);
    await sleep(SETTLE_MS);

    const times: Record<LegName, number[]> = { ours: [], cdp: [], shell: [], floor: [] };
    const bytes: Record<LegName, number> = { ours: 0, cdp: 0, shell: 0, floor: 0 };
    const perRound = settings.screenshots;
    for (let r = 0; r < settings.screenshotRounds; r++) {
      const line: string[] = [];
      for (const leg of rotated(legs, r)) {
        const round_ = await timed(leg, perRound);
        times[leg.name].push(...round_.times);
        bytes[leg.name] += round_.bytes;
        line.push(`${leg.name} p50 ${summarize(round_.times).p50Ms.toFixed(1)} ms`);
      }
      progress(`B11: round ${r + 1}/${settings.screenshotRounds}: ${line.join(", ")}`);
    }
    const summaries = Object.fromEntries(
      (Object.keys(times) as LegName[]).map((name) => [name, summarize(times[name])]),
    ) as Record<LegName, LatencySummary>;
    const count = settings.screenshotRounds * perRound;
    const samples = `${count} + ${count} screenshots`;
    const kb = (name: LegName) => Math.round(bytes[name] / count / KB);
    const ms = (summary: LatencySummary) =>
      `p50 ${summary.p50Ms.toFixed(1)}, p90 ${summary.p90Ms.toFixed(1)}, p99 ${summary.p99Ms.toFixed(1)}, max ${summary.maxMs.toFixed(1)} ms`;
    const cdpName = "CDP Page.captureScreenshot (PNG) on the browser's own DevTools socket, p50";
    return {
      id: "B11",
      title: "Screenshot (PNG) through the gateway, against CDP Page.captureScreenshot and a shell-out per screenshot",
      metrics: [
        metric({
          id: "B11",
          what: `screenshot of the ${BROWSER_WINDOW.width}×${BROWSER_WINDOW.height} screen through the gateway, p50`,
          unit: "ms",
          ours: round(summaries.ours.p50Ms, 1),
          baseline: { name: cdpName, value: round(summaries.cdp.p50Ms, 1) },
          target: { on: "ratio", op: "<=", value: 0.5 },
          samples,
        }),
        metric({
          id: "B11",
          what: "the same, against a shell-out per screenshot",
          unit: "ms",
          ours: round(summaries.ours.p50Ms, 1),
          baseline: { name: "xwd -root | xwdtopnm | pnmtopng, p50", value: round(summaries.shell.p50Ms, 1) },
          samples,
        }),
        metric({
          id: "B11",
          what: "floor p50: the agent's capture (X GetImage) and encoding (sharp) alone, in one process",
          unit: "ms",
          ours: round(summaries.floor.p50Ms, 1),
          baseline: { name: cdpName, value: round(summaries.cdp.p50Ms, 1) },
          samples,
        }),
      ],
      notes: [
        `One session (POST /browsers on B7's gateway and agent: SQLite, AGENT_XVFB=${BROWSER_SCREEN}, production Node ` +
          "settings), its browser showing a documentation-like page (text, links, gradient header, cards with gradient " +
          "images). Every leg takes one screenshot at a time, timed from the request to the PNG's bytes in the bench's " +
          "process, in rounds taking the legs in turn, a different leg first in each round: " +
          `${settings.screenshotRounds} round(s) of ${perRound} per leg after ${WARMUP} warm-up screenshots each.`,
        `Ours: POST /browsers/{id}/computer/screenshot with fetch, the whole ${BROWSER_WINDOW.width}×${BROWSER_WINDOW.height} ` +
          `screen, Chromium's toolbar included (PNG ${kb("ours")} KB on average): ${ms(summaries.ours)}. CDP: ` +
          `Page.captureScreenshot {format: "png"} (what Playwright's and Puppeteer's page.screenshot() ask for) on the ` +
          "browser's own loopback DevTools socket, already open and attached to the page, base64 decoded: the " +
          `${viewportWidth}×${viewportHeight} page only, fewer pixels than ours (PNG ${kb("cdp")} KB): ${ms(summaries.cdp)}. ` +
          `Through SystemInfo.getProcessInfo the session's browser is the warm spare (pid ${spare}): one browser.`,
        "Shell-out: sh -c 'xwd -root -display :N | xwdtopnm | pnmtopng' spawned by the bench's process for every " +
          `screenshot, with no HTTP server in front of it (PNG ${kb("shell")} KB): ${ms(summaries.shell)}.`,
        "Floor: the agent's own XScreen (GetImage on a kept X connection, BGRX turned into RGBX in place) and " +
          "encodePng (sharp, zlib level 1, no adaptive filtering) called in the bench's process: what a screenshot " +
          `costs with no HTTP, gateway, gRPC or session checks around it (PNG ${kb("floor")} KB): ${ms(summaries.floor)}.`,
      ],
      details: {
        ms: summaries,
        pngBytes: Object.fromEntries(
          (Object.keys(bytes) as LegName[]).map((name) => [name, Math.round(bytes[name] / count)]),
        ),
        sizes,
        viewport: { width: viewportWidth, height: viewportHeight },
      },
      seconds: (performance.now() - started) / 1000,
    };
  });
}
