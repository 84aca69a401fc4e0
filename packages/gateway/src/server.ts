import type { Server } from "node:http";
import { startIdleReaper } from "./browsers/idle-reaper.ts";
import type { GatewayConfig } from "./config.ts";
import { startHostPoller } from "./hosts/host-poller.ts";
import { HostPool } from "./hosts/host-pool.ts";
import { createApp } from "./http/app.ts";
import type { Logger } from "./logger.ts";
import { loadSecretsKey } from "./proxies/secrets-key.ts";
import { openStore, type Store, sqlitePathIn } from "./store/store.ts";

export interface RunningGateway {
  readonly port: number;
  readonly store: Store;
  stop(): Promise<void>;
}

// Slow clients are cut off: headers must arrive within 10 s, a whole request within 30 s.
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Opens the store (migrating it), registers HOST_AGENTS and checks every known host once, then
 * serves the API until stop(), checking hosts and ending idle sessions in the background.
 */
export async function startGateway(config: GatewayConfig, logger: Logger): Promise<RunningGateway> {
  const secretsKey = loadSecretsKey(config);
  const store = await openStore(
    config.databaseUrl ? { databaseUrl: config.databaseUrl } : { sqlitePath: sqlitePathIn(config.dataDir) },
  );
  const hosts = new HostPool(config.agentTls);
  // Every replica registers the configured agents; registering a known host changes nothing.
  const registeredAt = new Date().toISOString();
  for (const address of config.hostAgents) await store.hosts.register(address, registeredAt);
  const hostPoller = await startHostPoller(
    { store, hosts, timeoutMs: config.agentTimeoutMs },
    config.hostCheckIntervalMs,
    logger,
  );
  const idleReaper = startIdleReaper(store, config.idleCheckIntervalMs, logger);
  const app = createApp({
    store,
    hosts,
    secretsKey,
    proxyCheckUrl: config.proxyCheckUrl,
    logger,
    agentTimeoutMs: config.agentTimeoutMs,
    maxPressDurationMs: config.maxPressDurationMs,
  });
  const server: Server = await new Promise((resolve, reject) => {
    const listening = app.listen(config.port, config.host, (error?: Error) =>
      error ? reject(error) : resolve(listening),
    );
  });
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  return {
    port,
    store,
    stop: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await Promise.all([hostPoller.stop(), idleReaper.stop()]);
      hosts.close();
      await store.close();
    },
  };
}
