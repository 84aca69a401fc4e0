#!/usr/bin/env node
import { stateVersion } from "@browser-infra/contract";
import type { WindowSize } from "./browser/launch.ts";
import { killAll, MARKER_VARIABLE } from "./browser/processes.ts";
import { decideSandbox } from "./browser/sandbox.ts";
import { WarmSpare } from "./browser/warm-spare.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { claimDataDir } from "./data-dir.ts";
import { readScreenSize } from "./display/screen-size.ts";
import { type OwnXvfb, startOwnXvfb } from "./display/xvfb.ts";
import { openKeyboard } from "./keyboard/index.ts";
import { startProbeResponder } from "./liveness/probe-responder.ts";
import { createLogger } from "./logger.ts";
import { startMetricsServer } from "./metrics/metrics-server.ts";
import { xReconnects } from "./metrics/x-reconnects.ts";
import { ProxyRelay } from "./proxy-relay/relay.ts";
import { startAgentServer } from "./rpc/agent-server.ts";
import { BrowserSlot } from "./session/slot.ts";
import { AGENT_VERSION } from "./version.ts";

const SHUTDOWN_GRACE_MS = 5_000;
/** A headless browser's window: there is no screen to cover. */
const HEADLESS_WINDOW: WindowSize = { width: 1280, height: 800 };

// Static imports have loaded the whole program by now, so with NODE_COMPILE_CACHE set this also
// fills Node's compile cache; deploy/node-runtime.ts relies on that.
if (process.argv.includes("--version")) {
  process.stdout.write(`host-agent ${AGENT_VERSION}\n`);
  process.exit(0);
}

/**
 * One line and status 2, which the systemd unit does not restart (RestartPreventExitStatus=2):
 * starting again cannot fix a setting. Every other failure exits with 1 and is retried.
 */
function configurationError(error: ConfigError): never {
  process.stderr.write(`host-agent: configuration error: ${error.message}\n`);
  process.exit(2);
}

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  configurationError(error);
}

const logger = createLogger(config.logLevel);
let stopping = false;

function fail(message: string, error: unknown): never {
  if (error instanceof ConfigError) configurationError(error);
  logger.fatal({ err: error }, message);
  process.stderr.write(`host-agent: ${message}: ${(error as Error).message}\n`);
  process.exit(1);
}

// Before anything is started: kills what an earlier run on this data directory left behind.
const dataDir = await claimDataDir(config.dataDir).catch((error: unknown) => fail("cannot use AGENT_DATA_DIR", error));
process.once("exit", dataDir.release);
// A signal while the agent starts ends what it started so far (its Xvfb, a spare browser), found
// by the data directory's marker, instead of leaving it to the next start.
const stopWhileStarting = (signal: NodeJS.Signals) => {
  stopping = true;
  logger.info({ signal }, "stopped while starting");
  void killAll({ marker: `${MARKER_VARIABLE}=${config.dataDir}` }).finally(() => process.exit(0));
};
process.once("SIGTERM", stopWhileStarting);
process.once("SIGINT", stopWhileStarting);
if (dataDir.tightenedFrom) {
  logger.warn(
    { dataDir: config.dataDir, from: dataDir.tightenedFrom, to: "700" },
    "AGENT_DATA_DIR: other users could read it; made it private",
  );
}
if (dataDir.orphansKilled > 0) {
  logger.warn({ processes: dataDir.orphansKilled }, "killed processes an earlier run of this agent left behind");
}

let xvfb: OwnXvfb | undefined;
if (config.xvfbScreen) {
  xvfb = await startOwnXvfb(config.xvfbScreen, config.dataDir, config.keyboardLayout).catch((error: unknown) =>
    fail("cannot start Xvfb", error),
  );
  // Every X client of this process (node-x11 reads XAUTHORITY) and every browser it launches
  // (launch.ts passes it on) presents the display's cookie.
  process.env.XAUTHORITY = xvfb.xauthority;
  // Every session's browser and key presses are on this display: without it the agent is no host.
  void xvfb.exited.then((how) => {
    if (stopping) return;
    logger.fatal({ how }, "the agent's Xvfb ended");
    process.exit(1);
  });
}
const display = xvfb?.display ?? config.display;

const keyboard = display
  ? openKeyboard({
      display,
      logger,
      maxQueuedPresses: config.maxQueuedPresses,
      onReconnect: () => xReconnects.inc(),
    })
  : undefined;
if (!keyboard) {
  logger.warn(
    "no X display (DISPLAY and AGENT_XVFB unset): browsers run headless, press_key answers display_unavailable",
  );
}

let spare: WarmSpare | undefined;
let relay: ProxyRelay | undefined;
if (config.chromiumPath) {
  relay = await ProxyRelay.start(logger).catch((error: unknown) => fail("cannot start the proxy relay", error));
  const sandbox = decideSandbox();
  if (!sandbox.sandbox) logger.warn({ reason: sandbox.reason }, "Chromium runs without its sandbox");
  const windowSize = display
    ? await readScreenSize(display).catch((error: unknown) => fail(`cannot read the screen size of ${display}`, error))
    : HEADLESS_WINDOW;
  spare = new WarmSpare({
    chromiumPath: config.chromiumPath,
    display,
    dataDir: config.dataDir,
    windowSize,
    sandbox: sandbox.sandbox,
    proxyServer: `http://127.0.0.1:${relay.port}`,
    logger,
  });
} else {
  logger.warn("AGENT_CHROMIUM_PATH=none: sessions on this host get keyboard and files, no browser");
}

async function releaseStuckKeys(when: string): Promise<void> {
  try {
    await keyboard?.releaseAll();
  } catch (error) {
    logger.warn({ err: error, when }, "could not release keys");
  }
}

// A previous agent killed mid-hold can leave keys down on a display that outlived it.
await releaseStuckKeys("start");

// Stopped while starting: nothing more may be started; the exit follows once the rest is killed.
if (stopping) await new Promise<never>(() => {});
const slot = new BrowserSlot({
  spare,
  relay,
  display,
  keyboard,
  logger,
  onFenceFailure: (error) => {
    logger.fatal({ err: error }, "could not destroy a session's browser; exiting so that the restart wipes it");
    process.exit(1);
  },
});
const server = await startAgentServer({ ...config, display }, { keyboard, slot, logger }).catch((error: unknown) =>
  fail(`cannot listen on ${config.listen}`, error),
);
// A host that cannot launch Chromium tells the gateways it does not serve, so they hand it no
// session; it serves again once a launch (the spare's retries) works.
if (spare) {
  spare.onHealthChange = (healthy) => {
    logger[healthy ? "info" : "error"]({ healthy }, healthy ? "browsers launch again" : "cannot launch browsers");
    server.setServing(healthy && !stopping);
  };
  if (!spare.healthy) server.setServing(false);
}
// Gateways probe an idle host over UDP rather than hold a connection to it; without the responder
// (a Unix socket, or the UDP port taken) they watch its health stream instead.
const probes =
  server.port === undefined
    ? undefined
    : await startProbeResponder(config.listen.slice(0, config.listen.lastIndexOf(":")), server.port, () => ({
        status: server.serving ? "serving" : "not_serving",
        version: stateVersion(slot.instance, slot.currentSessionId ?? ""),
      })).catch((error: Error) => {
        logger.warn({ err: error }, "cannot answer liveness probes on UDP; gateways will watch the health stream");
        return undefined;
      });
const metrics = config.metricsListen
  ? await startMetricsServer(config.metricsListen).catch((error: Error) => {
      process.stderr.write(`host-agent: cannot serve metrics on ${config.metricsListen}: ${error.message}\n`);
      process.exit(1);
    })
  : undefined;

async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "shutting down");
  // Gateways stop handing it sessions at their next check; the slot refuses them from now on.
  server.setServing(false);
  if (config.drainTimeoutMs > 0 && slot.currentSessionId !== undefined) {
    logger.info({ sessionId: slot.currentSessionId, drainTimeoutMs: config.drainTimeoutMs }, "draining");
  }
  await slot.drain(config.drainTimeoutMs);
  // The fence of the session still running: its presses end, its keys come up, its browser and files go.
  await slot.shutdown();
  await relay?.close();
  await server.shutdown(SHUTDOWN_GRACE_MS);
  await probes?.close();
  await metrics?.close();
  await releaseStuckKeys("shutdown");
  await keyboard?.close();
  await xvfb?.stop();
  logger.info("stopped");
  process.exit(0);
}

process.off("SIGTERM", stopWhileStarting);
process.off("SIGINT", stopWhileStarting);
process.on("SIGTERM", () => void stop("SIGTERM"));
process.on("SIGINT", () => void stop("SIGINT"));

// Announced only once a signal can stop the agent cleanly.
logger.info(
  {
    port: server.port,
    listen: config.listen,
    tls: Boolean(config.tls),
    mtls: Boolean(config.tls?.clientCa),
    display,
    xauthority: process.env.XAUTHORITY,
    dataDir: config.dataDir,
    chromium: config.chromiumPath ?? "none",
    metricsPort: metrics?.port,
    livenessProbes: probes !== undefined,
  },
  "listening",
);
