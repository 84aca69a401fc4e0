import { createServer, type Server } from "node:http";
import { CdpUrls, wsOrigin } from "./browsers/cdp/cdp-url.ts";
import { CdpSockets } from "./browsers/cdp/sockets.ts";
import { CdpTokens } from "./browsers/cdp/token.ts";
import { cdpUpgrades, isCdpUpgrade } from "./browsers/cdp/upgrade.ts";
import { startIdleReaper } from "./browsers/idle-reaper.ts";
import { SessionLifecycle } from "./browsers/session-lifecycle.ts";
import type { GatewayConfig } from "./config.ts";
import { prepareDataDir } from "./data-dir.ts";
import { HOST_CHECKERS_GROUP, HostCheckShare } from "./hosts/check-share.ts";
import { startDnsDiscovery } from "./hosts/dns-discovery.ts";
import { startHostPoller } from "./hosts/host-poller.ts";
import { HostPool } from "./hosts/host-pool.ts";
import { LivenessProbes } from "./hosts/liveness-probes.ts";
import { createApp } from "./http/app.ts";
import { answerProtocolErrors } from "./http/protocol-errors.ts";
import type { Logger } from "./logger.ts";
import { loadSecretsKey } from "./proxies/secrets-key.ts";
import { openStore, type Store, sqlitePathIn } from "./store/store.ts";

export interface RunningGateway {
  readonly port: number;
  readonly store: Store;
  stop(): Promise<void>;
}

/**
 * Opens the store (migrating it), registers HOST_AGENTS and checks every known host once, then
 * serves the API until stop(), checking hosts and ending idle sessions in the background.
 */
export async function startGateway(config: GatewayConfig, logger: Logger): Promise<RunningGateway> {
  if (!config.databaseUrl) {
    for (const tightened of prepareDataDir(config.dataDir)) {
      logger.warn(tightened, "DATA_DIR: other users could read this; made it private");
    }
  }
  const secretsKey = loadSecretsKey(config);
  const store = await openStore(
    config.databaseUrl ? { databaseUrl: config.databaseUrl } : { sqlitePath: sqlitePathIn(config.dataDir) },
  );
  // Start hearing of revocations now, not at the first request, so the key cache is in use from it.
  store.apiKeys.revocationVersion();
  const hosts = new HostPool(config.agentTls);
  const cdpSockets = new CdpSockets({ store, logger, pingIntervalMs: config.cdpPingIntervalMs });
  const cdpTokens = new CdpTokens(secretsKey, config.cdpTokenTtlSeconds);
  const lifecycle = new SessionLifecycle({
    store,
    hosts,
    agentTimeoutMs: config.agentTimeoutMs,
    logger,
    onEnded: (sessionId, reason) => cdpSockets.closeSession(sessionId, `browser session ${sessionId} ended: ${reason}`),
  });
  // Known once the server listens (PORT=0 binds any free port).
  let cdpOrigin = "";
  // Every replica registers the configured agents; registering a known host changes nothing.
  const registeredAt = new Date().toISOString();
  for (const address of config.hostAgents) await store.hosts.register(address, registeredAt);
  // HOST_AGENTS_DNS: one round before the poller's first, so discovered agents are checked at start.
  const dnsDiscovery =
    config.hostAgentsDns &&
    (await startDnsDiscovery(
      { store, keep: config.hostAgents },
      config.hostAgentsDns,
      config.hostCheckIntervalMs,
      logger,
    ));
  // Replicas on one PostgreSQL store split the host checks between them.
  const share = new HostCheckShare(store.sql.join?.(HOST_CHECKERS_GROUP));
  const probes = new LivenessProbes();
  const hostPoller = await startHostPoller(
    { store, hosts, lifecycle, timeoutMs: config.agentTimeoutMs, share, probes, describedAt: new Map() },
    config.hostCheckIntervalMs,
    logger,
  );
  const idleReaper = startIdleReaper(store, lifecycle, config.idleCheckIntervalMs, logger);
  const app = createApp({
    store,
    hosts,
    lifecycle,
    secretsKey,
    proxyCheckUrl: config.proxyCheckUrl,
    logger,
    agentTimeoutMs: config.agentTimeoutMs,
    maxPressDurationMs: config.maxPressDurationMs,
    cdpUrls: new CdpUrls(cdpTokens, () => cdpOrigin),
    maxSessionsPerOrg: config.maxSessionsPerOrg,
    maxUploadBytes: config.maxUploadBytes,
    proxyChecksPerOrg: {
      concurrent: config.proxyChecksConcurrentPerOrg,
      perMinute: config.proxyChecksPerMinutePerOrg,
    },
    proxyAllowedNetworks: config.proxyAllowedNetworks,
    proxyUrlTemplates: config.proxyUrlTemplates,
    metricsPublic: config.metricsPublic,
  });
  // Slow clients are cut off. Node checks these timeouts only every connectionsCheckingInterval
  // (30 s by default), so it is tied to them for the limits to hold to the second.
  const server: Server = createServer(
    {
      headersTimeout: config.httpHeadersTimeoutMs,
      requestTimeout: config.httpRequestTimeoutMs,
      connectionsCheckingInterval: Math.min(1_000, Math.ceil(config.httpHeadersTimeoutMs / 4)),
      // Only WebSocket upgrades to a CDP path leave Express; any other Upgrade header (h2c…) is
      // served as the plain HTTP request it also is.
      shouldUpgradeCallback: isCdpUpgrade,
    },
    app,
  );
  answerProtocolErrors(server);
  server.on(
    "upgrade",
    cdpUpgrades({
      store,
      hosts,
      tokens: cdpTokens,
      sockets: cdpSockets,
      agentTimeoutMs: config.agentTimeoutMs,
      logger,
    }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  cdpOrigin = wsOrigin(
    config.publicUrl ?? `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`,
  );
  return {
    port,
    store,
    stop: async () => {
      // The server does not track upgraded sockets: they are closed here, or close() would wait for them.
      cdpSockets.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await Promise.all([dnsDiscovery?.stop(), hostPoller.stop(), idleReaper.stop(), lifecycle.close()]);
      await share.close();
      probes.close();
      hosts.close();
      await store.close();
    },
  };
}
