import type { Server } from "node:http";
import type { GatewayConfig } from "./config.ts";
import { HostPool } from "./hosts/host-pool.ts";
import { createApp } from "./http/app.ts";
import type { Logger } from "./logger.ts";
import { openStore, type Store, sqlitePathIn } from "./store/store.ts";

export interface RunningGateway {
  readonly port: number;
  readonly store: Store;
  stop(): Promise<void>;
}

// Slow clients are cut off: headers must arrive within 10 s, a whole request within 30 s.
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;

/** Opens the store (migrating it), then serves the API until stop(). */
export async function startGateway(config: GatewayConfig, logger: Logger): Promise<RunningGateway> {
  const store = await openStore(
    config.databaseUrl ? { databaseUrl: config.databaseUrl } : { sqlitePath: sqlitePathIn(config.dataDir) },
  );
  const hosts = new HostPool(config.agentTls);
  const app = createApp({
    store,
    hosts,
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
      hosts.close();
      await store.close();
    },
  };
}
