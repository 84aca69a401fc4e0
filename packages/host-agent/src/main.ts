#!/usr/bin/env node
import { ConfigError, loadConfig } from "./config.ts";
import { openKeyboard } from "./keyboard/index.ts";
import { createLogger } from "./logger.ts";
import { startMetricsServer } from "./metrics/metrics-server.ts";
import { xReconnects } from "./metrics/x-reconnects.ts";
import { startAgentServer } from "./rpc/agent-server.ts";
import { AGENT_VERSION } from "./version.ts";

const SHUTDOWN_GRACE_MS = 5_000;

// Static imports have loaded the whole program by now, so with NODE_COMPILE_CACHE set this also
// fills Node's compile cache; deploy/node-runtime.ts relies on that.
if (process.argv.includes("--version")) {
  process.stdout.write(`host-agent ${AGENT_VERSION}\n`);
  process.exit(0);
}

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`host-agent: configuration error: ${error.message}\n`);
  process.exit(2);
}

const logger = createLogger(config.logLevel);
const keyboard = config.display
  ? openKeyboard({ display: config.display, logger, onReconnect: () => xReconnects.inc() })
  : undefined;
if (!keyboard) logger.warn("DISPLAY is not set: press_key will answer display_unavailable; file_info works");

async function releaseStuckKeys(when: string): Promise<void> {
  try {
    await keyboard?.releaseAll();
  } catch (error) {
    logger.warn({ err: error, when }, "could not release keys");
  }
}

// A previous agent killed mid-hold can leave keys down on a display that outlived it.
await releaseStuckKeys("start");

const server = await startAgentServer(config, { keyboard, logger });
const metrics = config.metricsListen
  ? await startMetricsServer(config.metricsListen).catch((error: Error) => {
      process.stderr.write(`host-agent: cannot serve metrics on ${config.metricsListen}: ${error.message}\n`);
      process.exit(1);
    })
  : undefined;

let stopping = false;
async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "shutting down");
  await releaseStuckKeys("shutdown");
  await server.shutdown(SHUTDOWN_GRACE_MS);
  await metrics?.close();
  await releaseStuckKeys("shutdown");
  await keyboard?.close();
  logger.info("stopped");
  process.exit(0);
}

process.on("SIGTERM", () => void stop("SIGTERM"));
process.on("SIGINT", () => void stop("SIGINT"));

// Announced only once a signal can stop the agent cleanly.
logger.info(
  {
    port: server.port,
    listen: config.listen,
    tls: Boolean(config.tls),
    mtls: Boolean(config.tls?.clientCa),
    display: config.display,
    metricsPort: metrics?.port,
  },
  "listening",
);
