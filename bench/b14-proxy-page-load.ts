import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Browser, chromium as playwright } from "playwright-core";
import { Server as ProxyServer } from "proxy-chain";
import { decideSandbox } from "../packages/host-agent/src/browser/sandbox.ts";
import { type BenchContext, type BenchOutcome, metric } from "./lib/bench.ts";
import { type ColdChromium, devToolsUrlOf, launchColdChromium, waitForFocusedSpare } from "./lib/chromium.ts";
import { BROWSER_WINDOW, CHROMIUM_PATH } from "./lib/environment.ts";
import { round } from "./lib/measure.ts";
import { createSession, deleteSession } from "./lib/sessions.ts";
import { median } from "./lib/stats.ts";

/** Subresources of the page: each is one more request through the proxy. */
const IMAGES = 24;
/** Longer than the benchmark runs, so the idle reaper leaves the session alone. */
const SESSION_TIMEOUT_SECONDS = 3600;
const SCRIPT_BYTES = 200 * 1024;

/** A page of 1 + IMAGES + 1 requests, none cacheable, so every load fetches them all again. */
function pageSite(): Server {
  const script = `/*${"x".repeat(SCRIPT_BYTES)}*/ document.title = "loaded";`;
  const pixel = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");
  const page = `<!doctype html><html><body>${Array.from(
    { length: IMAGES },
    (_, i) => `<img src="/img/${i}.gif" width="8" height="8">`,
  ).join("")}<script src="/app.js"></script></body></html>`;
  return createServer((request, response) => {
    const noStore = { "cache-control": "no-store" };
    if (request.url?.startsWith("/img/"))
      response.writeHead(200, { ...noStore, "content-type": "image/gif" }).end(pixel);
    else if (request.url === "/app.js") {
      response.writeHead(200, { ...noStore, "content-type": "text/javascript" }).end(script);
    } else response.writeHead(200, { ...noStore, "content-type": "text/html" }).end(page);
  });
}

interface Leg {
  name: "ours" | "direct";
  browser: Browser;
  load(n: number): Promise<void>;
}

async function legOn(name: Leg["name"], cdpWsUrl: string, pageUrl: string): Promise<Leg> {
  const browser = await playwright.connectOverCDP(cdpWsUrl);
  const page = browser.contexts()[0]?.pages()[0] ?? (await browser.newPage());
  return {
    name,
    browser,
    load: async (n) => {
      const response = await page.goto(`${pageUrl}?n=${n}`, { waitUntil: "load" });
      if (response?.status() !== 200 || (await page.title()) !== "loaded") {
        throw new Error(`${name}: the page did not load through the proxy (status ${response?.status()})`);
      }
    },
  };
}

/**
 * B14: page loads per second of a session whose proxy is an upstream on loopback (ours: Chromium →
 * the agent's relay → the upstream → the site) against a Chromium of the same flags pointed at that
 * upstream itself (--proxy-server, which cannot carry credentials, so the upstream asks for none on
 * either leg). One page load is the page, 24 images and a 200 KiB script, none cacheable.
 */
export async function b14ProxyPageLoad(ctx: BenchContext): Promise<BenchOutcome> {
  const started = performance.now();
  const { env, settings, progress } = ctx;
  const rounds = settings.smoke ? 1 : 5;
  const loadsPerRound = settings.smoke ? 5 : 20;
  const warmup = settings.smoke ? 2 : 5;

  const site = pageSite();
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  const pageUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/page`;
  let carried = 0;
  const upstream = new ProxyServer({
    host: "127.0.0.1",
    port: 0,
    prepareRequestFunction: () => {
      carried++;
      return {};
    },
  });
  await upstream.listen();

  const gateway = await env.browserGateway();
  const headers = { authorization: `Bearer ${gateway.apiKey}`, "content-type": "application/json" };
  const legs: Leg[] = [];
  let cold: ColdChromium | undefined;
  let sessionId: string | undefined;
  try {
    const proxyResponse = await fetch(`${gateway.process.url}/proxies`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        type: "custom",
        protocol: "http",
        name: "b14-upstream",
        config: { host: "127.0.0.1", port: upstream.port },
      }),
    });
    if (!proxyResponse.ok)
      throw new Error(`POST /proxies answered ${proxyResponse.status}: ${await proxyResponse.text()}`);
    const proxy = (await proxyResponse.json()) as { id: string };

    const spare = await waitForFocusedSpare(gateway.agent);
    // Driven over its own DevTools socket, the session sees no activity through the gateway.
    sessionId = (await createSession(gateway, { proxy_id: proxy.id, timeout_seconds: SESSION_TIMEOUT_SECONDS }))
      .session_id;
    // Both legs are driven over their browser's own DevTools socket: only the proxy path differs.
    const oursUrl = devToolsUrlOf(spare);
    if (!oursUrl) throw new Error(`no DevToolsActivePort for the session's browser (pid ${spare})`);
    const { xvfb, dir } = await env.ownXvfb("b14-direct");
    cold = await launchColdChromium({
      chromiumPath: CHROMIUM_PATH,
      display: xvfb.display,
      xauthority: xvfb.xauthority,
      baseDir: dir,
      name: "direct",
      windowSize: BROWSER_WINDOW,
      sandbox: decideSandbox().sandbox,
      proxyServer: `http://127.0.0.1:${upstream.port}`,
    });
    legs.push(await legOn("ours", oursUrl, pageUrl), await legOn("direct", cold.cdpWsUrl, pageUrl));

    let n = 0;
    progress(`B14: ${warmup} warm-up page loads per leg`);
    for (const leg of legs) for (let i = 0; i < warmup; i++) await leg.load(n++);
    const carriedBefore = carried;
    const perSecond: Record<Leg["name"], number[]> = { ours: [], direct: [] };
    for (let r = 0; r < rounds; r++) {
      const line: string[] = [];
      // A different leg first in each round.
      for (const leg of r % 2 === 0 ? legs : [...legs].reverse()) {
        const roundStarted = performance.now();
        for (let i = 0; i < loadsPerRound; i++) await leg.load(n++);
        const rate = loadsPerRound / ((performance.now() - roundStarted) / 1000);
        perSecond[leg.name].push(rate);
        line.push(`${leg.name} ${rate.toFixed(1)}/s`);
      }
      progress(`B14: round ${r + 1}/${rounds}: ${line.join(", ")}`);
    }
    const requestsPerLoad = (carried - carriedBefore) / (2 * rounds * loadsPerRound);
    if (requestsPerLoad < IMAGES + 2) {
      throw new Error(`the upstream carried ${requestsPerLoad} requests per page load, not every one of them`);
    }
    const ours = median(perSecond.ours);
    const direct = median(perSecond.direct);
    const samples = `${rounds} × ${loadsPerRound} + ${rounds} × ${loadsPerRound} page loads`;
    return {
      id: "B14",
      title:
        "Page loads through a session's proxy (the agent's relay) against the same upstream set on Chromium directly",
      metrics: [
        metric({
          id: "B14",
          what: `page loads per second through the relay and a loopback upstream (${IMAGES + 2} requests each)`,
          unit: "loads/s",
          ours: round(ours, 1),
          baseline: { name: "Chromium --proxy-server=<the same upstream>", value: round(direct, 1) },
          target: { on: "ratio", op: ">=", value: 0.9 },
          samples,
        }),
      ],
      notes: [
        "Ours: a session created with a custom proxy (http, on loopback, no credentials) on B7's gateway and agent; " +
          "its Chromium sends everything to the agent's proxy-chain relay, which opens the route (address policy " +
          "with PROXY_ALLOWED_NETWORKS=127.0.0.0/8, a DNS-free decision for an IP literal) and forwards to the upstream. " +
          "Direct: a Chromium with the agent's own flags (chromiumFlags), on an Xvfb of the same screen, with " +
          "--proxy-server pointed at the same upstream. The upstream (proxy-chain, no authentication) and the site " +
          "(node:http) are in the runner's process, so both legs share their cost.",
        `Each leg is driven by playwright-core over its browser's own DevTools socket (not cdp_ws_url: only the ` +
          `proxy path differs): page.goto with waitUntil load, a fresh query string each time and no-store on every ` +
          `response. ${warmup} warm-up loads per leg, then ${rounds} round(s) of ${loadsPerRound} loads per leg, a ` +
          `different leg first in each round; the figure is the median round's loads per second. The upstream ` +
          `carried ${requestsPerLoad.toFixed(1)} requests per load (the page, ${IMAGES} images, the script, and ` +
          `Chromium's own favicon request): every request of both legs went through it. Rounds: ours ` +
          `${perSecond.ours.map((v) => v.toFixed(1)).join(", ")}; direct ${perSecond.direct.map((v) => v.toFixed(1)).join(", ")} loads/s.`,
      ],
      details: { perSecond, requestsPerLoad, rounds, loadsPerRound },
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    for (const leg of legs) await leg.browser.close().catch(() => undefined);
    await cold?.stop();
    if (sessionId) await deleteSession(gateway, sessionId);
    await upstream.close(true);
    site.closeAllConnections();
    await new Promise((resolve) => site.close(resolve));
  }
}
