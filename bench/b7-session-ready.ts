import { setTimeout as sleep } from "node:timers/promises";
import { decideSandbox } from "../packages/host-agent/src/browser/sandbox.ts";
import { type BenchContext, type BenchOutcome, metric } from "./lib/bench.ts";
import { browserProcessesVia, firstCdpAnswer, launchColdChromium, waitForFocusedSpare } from "./lib/chromium.ts";
import { BROWSER_SCREEN, BROWSER_WINDOW, CHROMIUM_PATH } from "./lib/environment.ts";
import { round } from "./lib/measure.ts";
import { summarize } from "./lib/stats.ts";

/** Quiet time before every measured launch or session, on both sides, so neither inherits the other's work. */
const SETTLE_MS = 1_000;
/** How long the first POST may wait for the gateway's first host check to find the agent. */
const FIRST_HOST_CHECK_MS = 20_000;

interface SessionRecord {
  session_id: string;
  cdp_ws_url: string;
}

/** One session through the gateway: POST /browsers, the first CDP answer, DELETE; times in ms from the POST. */
interface OursRound {
  postMs: number;
  readyMs: number;
  deleteMs: number;
  /** From DELETE's answer until the agent's next spare held the focus: when the host can hand over again. */
  respareMs: number;
  /**
   * The session's browser was the warm spare that had the focus before the POST: asked through the
   * session's cdp_ws_url, SystemInfo.getProcessInfo lists the spare's pid as its browser process.
   */
  handedSpare: boolean;
}

/**
 * B7: time from POST /browsers to the first answered CDP command through the returned cdp_ws_url,
 * against launching Debian's Chromium cold per session with the agent's own flags. After each
 * session is deleted, the next round waits until the agent's new spare has the focus (the last
 * step of its launch) and then SETTLE_MS more, so every session measured is a handover, never a launch.
 */
export async function b7SessionReady(ctx: BenchContext): Promise<BenchOutcome> {
  const started = performance.now();
  const { env, settings, progress } = ctx;
  const gateway = await env.browserGateway();
  const { agent } = gateway;
  const { xvfb, dir: coldDir } = await env.ownXvfb("b7-cold");
  const sandbox = decideSandbox().sandbox;
  const headers = { authorization: `Bearer ${gateway.apiKey}`, "content-type": "application/json" };

  let spare = await waitForFocusedSpare(agent);
  let product = "";

  const ours = async (firstRound: boolean): Promise<OursRound> => {
    await sleep(SETTLE_MS);
    const postStarted = performance.now();
    let response = await fetch(`${gateway.process.url}/browsers`, { method: "POST", headers, body: "{}" });
    // Only before the first session: the gateway's first host checks may not have found the agent yet.
    while (firstRound && response.status === 503 && performance.now() - postStarted < FIRST_HOST_CHECK_MS) {
      await response.arrayBuffer();
      await sleep(100);
      response = await fetch(`${gateway.process.url}/browsers`, { method: "POST", headers, body: "{}" });
    }
    const text = await response.text();
    if (response.status !== 200) throw new Error(`POST /browsers answered ${response.status}: ${text}`);
    const session = JSON.parse(text) as SessionRecord;
    const postMs = performance.now() - postStarted;
    product = await firstCdpAnswer(session.cdp_ws_url);
    const readyMs = performance.now() - postStarted;
    // Off the clock: the browser behind cdp_ws_url (through the gateway) names its own processes.
    const processes = await browserProcessesVia(session.cdp_ws_url);
    const handedSpare = processes.some((p) => p.type === "browser" && p.id === spare);

    const deleteStarted = performance.now();
    const deleted = await fetch(`${gateway.process.url}/browsers/${session.session_id}`, {
      method: "DELETE",
      headers,
    });
    await deleted.arrayBuffer();
    if (deleted.status !== 204) throw new Error(`DELETE /browsers/${session.session_id} answered ${deleted.status}`);
    const deleteMs = performance.now() - deleteStarted;
    // The agent launches the next spare only now, after the stop: wait for it before the next round.
    spare = await waitForFocusedSpare(agent);
    const respareMs = performance.now() - deleteStarted - deleteMs;
    return { postMs, readyMs, deleteMs, respareMs, handedSpare };
  };

  let coldCount = 0;
  const cold = async (): Promise<number> => {
    await sleep(SETTLE_MS);
    const launchStarted = performance.now();
    const browser = await launchColdChromium({
      chromiumPath: CHROMIUM_PATH,
      display: xvfb.display,
      xauthority: xvfb.xauthority,
      baseDir: coldDir,
      name: `cold-${++coldCount}`,
      windowSize: BROWSER_WINDOW,
      sandbox,
    });
    try {
      await firstCdpAnswer(browser.cdpWsUrl);
      return performance.now() - launchStarted;
    } finally {
      await browser.stop();
    }
  };

  progress("B7: warm-up, one session and one cold launch");
  await ours(true);
  await cold();
  const oursRounds: OursRound[] = [];
  const coldMs: number[] = [];
  for (let r = 1; r <= settings.browserSessions; r++) {
    const o = await ours(false);
    oursRounds.push(o);
    const c = await cold();
    coldMs.push(c);
    progress(
      `B7: round ${r}/${settings.browserSessions}: ours ${o.readyMs.toFixed(1)} ms (POST ${o.postMs.toFixed(1)} ms), ` +
        `cold ${c.toFixed(0)} ms`,
    );
  }
  const notHanded = oursRounds.filter((o) => !o.handedSpare).length;
  if (notHanded > 0) throw new Error(`${notHanded} session(s) did not get the warm spare that had the focus`);

  const oursSummary = summarize(oursRounds.map((o) => o.readyMs));
  const postSummary = summarize(oursRounds.map((o) => o.postMs));
  const deleteSummary = summarize(oursRounds.map((o) => o.deleteMs));
  const respareSummary = summarize(oursRounds.map((o) => o.respareMs));
  const coldSummary = summarize(coldMs);
  const samples = `${oursSummary.count} + ${coldSummary.count} sessions`;
  return {
    id: "B7",
    title: "session ready: POST /browsers → first CDP answer through cdp_ws_url",
    metrics: [
      metric({
        id: "B7",
        what: "POST /browsers → first CDP answer, p50",
        unit: "ms",
        ours: round(oursSummary.p50Ms, 1),
        baseline: { name: "cold Chromium launch → first CDP answer, p50", value: round(coldSummary.p50Ms, 1) },
        target: { on: "ratio", op: "<=", value: 0.2 },
        samples,
      }),
      metric({
        id: "B7",
        what: "POST /browsers → first CDP answer, p90",
        unit: "ms",
        ours: round(oursSummary.p90Ms, 1),
        baseline: { name: "cold Chromium launch → first CDP answer, p90", value: round(coldSummary.p90Ms, 1) },
        samples,
      }),
    ],
    notes: [
      `${settings.browserSessions} alternating rounds after one warm-up each: one session through the gateway, then one ` +
        `cold launch, each after ${SETTLE_MS / 1000} s of quiet. Ours: POST /browsers {} on a gateway (SQLite, production ` +
        "Node settings) whose only host is an agent with AGENT_XVFB=" +
        `${BROWSER_SCREEN}, then a WebSocket (Node's own) to the returned cdp_ws_url and Browser.getVersion; the clock stops ` +
        `at its answer (${product}). The cdp_ws_url is the gateway's (/browsers/{id}/cdp?token=…), so the time includes ` +
        "what a client sees there: the upgrade (token and session checked), the gRPC stream to the agent, the agent's " +
        "own DevTools connection to Chromium, and the command's way through both hops. Then DELETE, and the next round " +
        "waits until the agent's new warm spare holds the X focus (the last step of its launch, seen from the bench over " +
        "X11 and /proc), so every session measured is a handover of an idle spare; in every round, asked off the clock " +
        "through the session's cdp_ws_url, SystemInfo.getProcessInfo named that spare's pid as the browser process.",
      `Ours split: POST answered at p50 ${postSummary.p50Ms.toFixed(1)} ms (p90 ${postSummary.p90Ms.toFixed(1)} ms); the ` +
        `first CDP answer adds the rest. DELETE (the agent's fence: process group killed, directory deleted) took p50 ` +
        `${deleteSummary.p50Ms.toFixed(0)} ms (p90 ${deleteSummary.p90Ms.toFixed(0)} ms); the next spare held the focus ` +
        `p50 ${respareSummary.p50Ms.toFixed(0)} ms (p90 ${respareSummary.p90Ms.toFixed(0)} ms) after DELETE answered. A ` +
        "POST in that window waits for the spare's launch to finish (WarmSpare.take), so back-to-back sessions on one " +
        "host see part of a launch; this benchmark measures a host that was idle.",
      "Cold: the runner spawns /usr/bin/chromium with the agent's own flags (chromiumFlags of " +
        "packages/host-agent/src/browser/launch.ts: fresh --user-data-dir from makeBrowserDir, --remote-debugging-port=0, " +
        `${sandbox ? "" : "--no-sandbox (root), "}headed) on an Xvfb of the same size started by the agent's own code, ` +
        'reads "DevTools listening on ws://…" from its stderr, connects and sends Browser.getVersion. Timed from the ' +
        "browser directory's creation to the answer; then its process group is killed and its directory deleted, " +
        "off the clock. Chromium's files are in the page cache (a service that launches per session keeps them there).",
    ],
    details: {
      oursReadyMs: oursSummary,
      oursPostMs: postSummary,
      oursDeleteMs: deleteSummary,
      oursRespareMs: respareSummary,
      coldMs: coldSummary,
      roundsMs: { ours: oursRounds.map((o) => round(o.readyMs, 1)), cold: coldMs.map((c) => round(c, 1)) },
      product,
    },
    seconds: (performance.now() - started) / 1000,
  };
}
