#!/usr/bin/env node
import { ConfigError, type GatewayConfig, loadConfig } from "./config.ts";
import { createLogger } from "./logger.ts";
import { startGateway } from "./server.ts";
import { GATEWAY_VERSION } from "./version.ts";

// Static imports have loaded the whole program by now, so with NODE_COMPILE_CACHE set this also
// fills Node's compile cache; deploy/node-runtime.ts relies on that.
if (process.argv.includes("--version")) {
  process.stdout.write(`gateway ${GATEWAY_VERSION}\n`);
  process.exit(0);
}

/**
 * One line and status 2, which the systemd unit does not restart (RestartPreventExitStatus=2):
 * starting again cannot fix a setting. Every other failure exits with 1 and is retried.
 */
function configurationError(error: ConfigError): never {
  process.stderr.write(`gateway: configuration error: ${error.message}\n`);
  process.exit(2);
}

let config: GatewayConfig;
try {
  config = loadConfig(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  configurationError(error);
}

const logger = createLogger(config.logLevel);
let gateway: Awaited<ReturnType<typeof startGateway>>;
try {
  gateway = await startGateway(config, logger);
} catch (error) {
  // Some settings are found wrong only now (SECRETS_KEY missing with DATABASE_URL, a bad
  // secrets.key): as final as those loadConfig refused.
  if (error instanceof ConfigError) configurationError(error);
  logger.fatal({ err: error }, "could not start");
  process.stderr.write(`gateway: could not start: ${(error as Error).message}\n`);
  process.exit(1);
}

let stopping = false;
async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "shutting down");
  await gateway.stop();
  logger.info("stopped");
  process.exit(0);
}
process.on("SIGTERM", () => void stop("SIGTERM"));
process.on("SIGINT", () => void stop("SIGINT"));

// Announced only once a signal can stop the gateway cleanly.
logger.info({ port: gateway.port, host: config.host, store: config.databaseUrl ? "postgres" : "sqlite" }, "listening");
