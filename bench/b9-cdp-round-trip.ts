import { setTimeout as sleep } from "node:timers/promises";
import { type BenchContext, type BenchOutcome, metric } from "./lib/bench.ts";
import type { CdpClient } from "./lib/cdp-client.ts";
import { BROWSER_SCREEN } from "./lib/environment.ts";
import type { LatencySummary } from "./lib/load-spec.ts";
import { round } from "./lib/measure.ts";
import { withFocusedSession } from "./lib/sessions.ts";
import { median, summarize } from "./lib/stats.ts";

/** Quiet time before each part's measured rounds: the session's handover and page setup are done. */
const SETTLE_MS = 1_000;
/** Screenshot requests each leg keeps in flight: a stream, each reply's transfer overlapping the next capture. */
const SCREENSHOTS_IN_FLIGHT = 2;
/**
 * PNG encoded for speed (Chromium's faster zlib setting): on random pixels it is as large as the
 * default PNG, and Chromium captures about twice as many a second, so more of the time is the carrying.
 */
const SCREENSHOT = { format: "png", optimizeForSpeed: true } as const;
/** Screenshots per leg before the measured rounds. */
const SCREENSHOT_WARMUP = 4;
const MB = 1024 * 1024;

/** The page every screenshot captures: a canvas over the whole viewport, every pixel random, so PNG cannot shrink it. */
const NOISE_PAGE = `(() => {
  document.body.style.margin = "0";
  document.body.style.overflow = "hidden";
  const canvas = document.createElement("canvas");
  canvas.width = innerWidth;
  canvas.height = innerHeight;
  canvas.style.display = "block";
  const context = canvas.getContext("2d");
  const image = context.createImageData(canvas.width, canvas.height);
  for (let offset = 0; offset < image.data.length; offset += 65536) {
    crypto.getRandomValues(image.data.subarray(offset, offset + 65536));
  }
  for (let alpha = 3; alpha < image.data.length; alpha += 4) image.data[alpha] = 255;
  context.putImageData(image, 0, 0);
  document.body.append(canvas);
  return new Promise((resolve) =>
    requestAnimationFrame(() => requestAnimationFrame(() => resolve([canvas.width, canvas.height]))),
  );
})()`;

type LegName = "gateway" | "floor" | "direct";

interface Leg {
  name: LegName;
  client: CdpClient;
  /** The leg's flat CDP session on the page that is captured. */
  pageSession: string;
}

interface ScreenshotRound {
  seconds: number;
  bytes: number;
  screenshots: number;
}

/** Width and height of a PNG from its IHDR chunk. */
function pngSize(png: Buffer): { width: number; height: number } {
  if (png.length < 24 || png.readUInt32BE(0) !== 0x89504e47 || png.toString("latin1", 12, 16) !== "IHDR") {
    throw new Error("the screenshot is not a PNG");
  }
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** The legs in the order round `r` runs them: each leg goes first in turn. */
function rotated<T>(legs: readonly T[], r: number): T[] {
  const shift = r % legs.length;
  return [...legs.slice(shift), ...legs.slice(0, shift)];
}

/** `count` Browser.getVersion round trips one after another; each one's time in ms. */
async function roundTrips(client: CdpClient, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const sent = performance.now();
    await client.sendRaw("Browser.getVersion");
    times.push(performance.now() - sent);
  }
  return times;
}

/**
 * `count` PNG screenshots of the page, SCREENSHOTS_IN_FLIGHT requests outstanding at any time; the
 * clock runs from the first request to the last reply, bytes are every message received meanwhile.
 */
async function screenshotStream(leg: Leg, count: number): Promise<ScreenshotRound> {
  const bytesBefore = leg.client.bytesReceived;
  const started = performance.now();
  let sent = 0;
  const next = async (): Promise<void> => {
    while (sent < count) {
      sent++;
      const reply = await leg.client.sendRaw("Page.captureScreenshot", SCREENSHOT, leg.pageSession);
      if (!reply.subarray(0, 64).toString("latin1").includes('"result":{"data":"')) {
        throw new Error(`${leg.name}: Page.captureScreenshot failed: ${reply.subarray(0, 300).toString("utf8")}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(SCREENSHOTS_IN_FLIGHT, count) }, next));
  return {
    seconds: (performance.now() - started) / 1000,
    bytes: leg.client.bytesReceived - bytesBefore,
    screenshots: count,
  };
}

/**
 * B9: round trip of a small CDP command (Browser.getVersion) through the gateway's cdp_ws_url
 * (WebSocket → gateway → gRPC stream → agent → Chromium's DevTools socket) against the same command
 * on Chromium's own DevTools socket, same browser, same client, with the bare two-hop floor beside
 * them; then the throughput of a stream of large PNG screenshots on all three.
 */
export async function b9CdpRoundTrip(ctx: BenchContext): Promise<BenchOutcome> {
  const started = performance.now();
  const { env, settings, progress } = ctx;
  const gateway = await env.browserGateway();
  return withFocusedSession(gateway, async ({ session, directUrl, open }) => {
    const floorGateway = await env.cdpFloor();
    const viaGateway = await open(session.cdp_ws_url);
    const viaFloor = await open(`ws://127.0.0.1:${floorGateway.port}/cdp/${encodeURIComponent(directUrl)}`);
    const direct = await open(directUrl);

    const product = (await viaGateway.send<{ product: string }>("Browser.getVersion")).product;
    for (const client of [viaFloor, direct]) {
      const other = (await client.send<{ product: string }>("Browser.getVersion")).product;
      if (other !== product) throw new Error(`the legs reach different browsers: ${product}, ${other}`);
    }

    // The page both legs capture: the browser's own about:blank tab, attached from each connection.
    const { targetInfos } = await direct.send<{ targetInfos: { targetId: string; type: string; url: string }[] }>(
      "Target.getTargets",
    );
    const page = targetInfos.find((t) => t.type === "page");
    if (!page) throw new Error(`the session's browser has no page: ${JSON.stringify(targetInfos)}`);
    const attach = async (client: CdpClient) =>
      (await client.send<{ sessionId: string }>("Target.attachToTarget", { targetId: page.targetId, flatten: true }))
        .sessionId;
    const legs: Leg[] = [
      { name: "gateway", client: viaGateway, pageSession: await attach(viaGateway) },
      { name: "floor", client: viaFloor, pageSession: await attach(viaFloor) },
      { name: "direct", client: direct, pageSession: await attach(direct) },
    ];
    const directLeg = legs[2] as Leg;
    const drawn = await direct.send<{ result: { value: [number, number] } }>(
      "Runtime.evaluate",
      { expression: NOISE_PAGE, awaitPromise: true, returnByValue: true },
      directLeg.pageSession,
    );
    const [width, height] = drawn.result.value;

    // Round trips: warm-up on each leg, then rounds of every leg in turn, a different leg first in each round.
    progress(`B9: ${settings.cdpWarmup} warm-up round trips per leg`);
    for (const leg of legs) await roundTrips(leg.client, settings.cdpWarmup);
    await sleep(SETTLE_MS);
    const times: Record<LegName, number[]> = { gateway: [], floor: [], direct: [] };
    const perRound = Math.ceil(settings.cdpRoundTrips / settings.cdpRounds);
    for (let r = 0; r < settings.cdpRounds; r++) {
      const line: string[] = [];
      for (const leg of rotated(legs, r)) {
        const round = await roundTrips(leg.client, perRound);
        times[leg.name].push(...round);
        const summary = summarize(round);
        line.push(`${leg.name} p50 ${summary.p50Ms.toFixed(3)} p99 ${summary.p99Ms.toFixed(2)} ms`);
      }
      progress(`B9: round trips, round ${r + 1}/${settings.cdpRounds}: ${line.join(", ")}`);
    }
    const ours = summarize(times.gateway);
    const floorSummary = summarize(times.floor);
    const directSummary = summarize(times.direct);

    // Screenshots: one checked on each leg, a short warm-up each, then rounds as above.
    const shotSizes: number[] = [];
    for (const leg of legs) {
      const { data } = await leg.client.send<{ data: string }>("Page.captureScreenshot", SCREENSHOT, leg.pageSession);
      const png = Buffer.from(data, "base64");
      const size = pngSize(png);
      if (size.width !== width || size.height !== height) {
        throw new Error(`${leg.name}: a ${size.width}×${size.height} screenshot of a ${width}×${height} page`);
      }
      shotSizes.push(png.length);
    }
    progress(
      `B9: screenshots of ${width}×${height} noise, PNG ${((shotSizes[0] ?? 0) / MB).toFixed(2)} MB; ${SCREENSHOT_WARMUP} warm-up screenshots per leg`,
    );
    for (const leg of legs) await screenshotStream(leg, SCREENSHOT_WARMUP);
    await sleep(SETTLE_MS);
    const shots: Record<LegName, ScreenshotRound[]> = { gateway: [], floor: [], direct: [] };
    for (let r = 0; r < settings.screenshotRounds; r++) {
      const line: string[] = [];
      for (const leg of rotated(legs, r)) {
        const result = await screenshotStream(leg, settings.screenshots);
        shots[leg.name].push(result);
        line.push(`${leg.name} ${(result.bytes / MB / result.seconds).toFixed(1)} MB/s`);
      }
      progress(`B9: screenshots, round ${r + 1}/${settings.screenshotRounds}: ${line.join(", ")}`);
    }
    const mbPerS = (rounds: ScreenshotRound[]) => median(rounds.map((s) => s.bytes / MB / s.seconds));
    const shotsPerS = (rounds: ScreenshotRound[]) => median(rounds.map((s) => s.screenshots / s.seconds));
    const bytesPerShot = (rounds: ScreenshotRound[]) =>
      rounds.reduce((sum, s) => sum + s.bytes, 0) / rounds.reduce((sum, s) => sum + s.screenshots, 0);
    const oursShotBytes = bytesPerShot(shots.gateway);
    const directShotBytes = bytesPerShot(shots.direct);
    if (Math.abs(oursShotBytes - directShotBytes) > 1024) {
      throw new Error(`the legs received different screenshots: ${oursShotBytes} and ${directShotBytes} bytes each`);
    }

    const limit = 1.5 * directSummary.p50Ms + 0.3;
    const samples = `${ours.count} + ${directSummary.count} round trips`;
    const floorSamples = `${floorSummary.count} + ${directSummary.count} round trips`;
    const shotCount = settings.screenshotRounds * settings.screenshots;
    const shotSamples = `${shotCount} + ${shotCount} screenshots`;
    const direct_ = "straight to Chromium's DevTools socket";
    const ms = (summary: LatencySummary) =>
      `p50 ${summary.p50Ms.toFixed(3)}, p90 ${summary.p90Ms.toFixed(3)}, p99 ${summary.p99Ms.toFixed(3)}, max ${summary.maxMs.toFixed(1)} ms`;
    const mbRounds = (name: LegName) => shots[name].map((s) => (s.bytes / MB / s.seconds).toFixed(1)).join(", ");
    return {
      id: "B9",
      title:
        "CDP through cdp_ws_url: Browser.getVersion round trip and a screenshot stream, against Chromium's own socket",
      metrics: [
        metric({
          id: "B9",
          what: "CDP round trip (Browser.getVersion) through cdp_ws_url, p50",
          unit: "ms",
          ours: round(ours.p50Ms, 3),
          baseline: { name: `${direct_}, p50`, value: round(directSummary.p50Ms, 3) },
          target: { on: "value", op: "<=", value: round(limit, 3), basis: "1.5 × direct p50 + 0.3 ms" },
          samples,
        }),
        metric({
          id: "B9",
          what: "CDP round trip (Browser.getVersion) through cdp_ws_url, p99",
          unit: "ms",
          ours: round(ours.p99Ms, 3),
          baseline: { name: `${direct_}, p99`, value: round(directSummary.p99Ms, 3) },
          samples,
        }),
        metric({
          id: "B9",
          what: "floor p50: bare ws server → bare grpc-js stream → bare agent → ws, same browser",
          unit: "ms",
          ours: round(floorSummary.p50Ms, 3),
          baseline: { name: `${direct_}, p50`, value: round(directSummary.p50Ms, 3) },
          samples: floorSamples,
        }),
        metric({
          id: "B9",
          what: `PNG screenshot stream (${width}×${height} noise, ${SCREENSHOTS_IN_FLIGHT} in flight) through cdp_ws_url`,
          unit: "MB/s",
          ours: round(mbPerS(shots.gateway), 1),
          baseline: { name: direct_, value: round(mbPerS(shots.direct), 1) },
          samples: shotSamples,
        }),
        metric({
          id: "B9",
          what: "the same stream through cdp_ws_url, screenshots per second",
          unit: "shots/s",
          ours: round(shotsPerS(shots.gateway), 2),
          baseline: { name: direct_, value: round(shotsPerS(shots.direct), 2) },
          samples: shotSamples,
        }),
        metric({
          id: "B9",
          what: "floor: the same stream through the bare pair",
          unit: "MB/s",
          ours: round(mbPerS(shots.floor), 1),
          baseline: { name: direct_, value: round(mbPerS(shots.direct), 1) },
          samples: shotSamples,
        }),
      ],
      notes: [
        `One session (POST /browsers on B7's gateway and agent: SQLite, AGENT_XVFB=${BROWSER_SCREEN}, production Node ` +
          "settings) and three WebSockets from the runner, all with the same client (the ws package, no compression): " +
          "to the session's cdp_ws_url (ours: gateway → gRPC stream HostAgent.Cdp → the agent's own DevTools " +
          "connection); to the floor pair below; and straight to that Chromium's loopback DevTools URL (from the " +
          "DevToolsActivePort file in its profile). Through cdp_ws_url, SystemInfo.getProcessInfo named the warm " +
          `spare's pid as the browser process, and all three answered the same product (${product}): one browser.`,
        `Round trips: Browser.getVersion, one at a time, each timed from send to reply; ${settings.cdpRounds} round(s) ` +
          `of ${perRound} per leg after ${settings.cdpWarmup} warm-up round trips each, the legs in turn and a different ` +
          `leg first in each round. Ours ${ms(ours)}; floor ${ms(floorSummary)}; direct ${ms(directSummary)}. Target: ` +
          `ours p50 ≤ 1.5 × the direct p50 of the same run + 0.3 ms = ${limit.toFixed(3)} ms.`,
        "The floor row is the same design with nothing else (bench/baselines/floor-cdp-*.ts): a bare ws server that " +
          "bridges each socket to a raw-buffer grpc-js bidirectional stream, and a bare grpc-js server that opens a ws " +
          "to Chromium and carries the messages, both with the gateway's and the agent's Node settings. No token, store, " +
          "protobuf, back-pressure, pings, activity touches, logging or metrics. A message takes three more sockets and " +
          "two more processes than the direct leg; on this 2-core VM every process hop is a wake-up of another process.",
        `Screenshots: the session's about:blank tab, attached from each connection (flat sessions), shows a ${width}×${height} ` +
          "canvas of random pixels, so every Page.captureScreenshot reply (PNG, optimizeForSpeed) is " +
          `${(oursShotBytes / MB).toFixed(2)} MB of JSON on every leg. ${settings.screenshotRounds} round(s) of ` +
          `${settings.screenshots} screenshots per leg after ${SCREENSHOT_WARMUP} warm-up screenshots each, ${SCREENSHOTS_IN_FLIGHT} requests in ` +
          "flight; MB/s is the bytes of the messages received from the first request to the last reply, median round. " +
          `Rounds (MB/s): ours ${mbRounds("gateway")}; floor ${mbRounds("floor")}; direct ${mbRounds("direct")}. ` +
          "Chromium's capture and encoding are in every leg alike and bound the direct leg; runner, gateway, agent and " +
          "Chromium share the same two cores.",
      ],
      details: {
        roundTripMs: { gateway: ours, floor: floorSummary, direct: directSummary },
        roundTripLimitMs: round(limit, 3),
        screenshots: {
          width,
          height,
          pngBytes: shotSizes[0],
          messageBytes: Math.round(oursShotBytes),
          inFlight: SCREENSHOTS_IN_FLIGHT,
          roundsMBPerS: Object.fromEntries(
            (["gateway", "floor", "direct"] as const).map((name) => [
              name,
              shots[name].map((s) => round(s.bytes / MB / s.seconds, 1)),
            ]),
          ),
        },
        product,
      },
      seconds: (performance.now() - started) / 1000,
    };
  });
}
