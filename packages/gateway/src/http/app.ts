import type { Network } from "@browser-infra/contract";
import express, { type Express } from "express";
import { pinoHttp } from "pino-http";
import { requireAuth } from "../auth/require-auth.ts";
import type { CdpUrls } from "../browsers/cdp/cdp-url.ts";
import { browserRoutes } from "../browsers/routes.ts";
import type { SessionLifecycle } from "../browsers/session-lifecycle.ts";
import type { HostPool } from "../hosts/host-pool.ts";
import type { Logger } from "../logger.ts";
import { httpMetrics } from "../metrics/http-metrics.ts";
import { proxyRoutes } from "../proxies/routes.ts";
import type { ProxyUrlTemplates } from "../proxies/url-templates.ts";
import type { Store } from "../store/store.ts";
import { noRoute } from "./api-router.ts";
import { sendError } from "./error-body.ts";
import { jsonBody } from "./json-body.ts";
import { loggedUrl } from "./log-redaction.ts";
import { openApiDocument } from "./openapi.ts";
import { operationalRoutes } from "./operational-routes.ts";
import { callerRequestIdOf, requestId } from "./request-id.ts";

export interface AppDeps {
  store: Store;
  hosts: HostPool;
  lifecycle: SessionLifecycle;
  logger: Logger;
  agentTimeoutMs: number;
  maxPressDurationMs: number;
  /** Seals custom proxy secrets at rest; see proxies/secrets-key.ts for where it comes from. */
  secretsKey: Buffer;
  /** What a proxy health check fetches through the proxy when the caller names no url. */
  proxyCheckUrl: string;
  /** Makes each session's cdp_ws_url. */
  cdpUrls: CdpUrls;
  /** Active sessions one organization may hold at once; 0: no limit. */
  maxSessionsPerOrg: number;
  /** The largest body write_file takes; unset: DEFAULT_MAX_UPLOAD_BYTES (see browsers/fs/write-file.ts). */
  maxUploadBytes?: number;
  /** Proxy checks one organization may run at once, and start per minute, on this replica. */
  proxyChecksPerOrg: { concurrent: number; perMinute: number };
  /** Networks tenants' proxies may be reached in although the address policy refuses them by default. */
  proxyAllowedNetworks: readonly Network[];
  /** The upstream of each managed proxy type. */
  proxyUrlTemplates: ProxyUrlTemplates;
  /** Whether GET /metrics answers clients other than loopback ones. */
  metricsPublic: boolean;
}

export function createApp(deps: AppDeps): Express {
  const { store, logger } = deps;
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);

  app.use(httpMetrics);
  app.use(
    pinoHttp({
      logger,
      genReqId: requestId,
      customLogLevel: (_req, res) => (res.statusCode === 500 ? "error" : res.statusCode > 500 ? "warn" : "info"),
      serializers: {
        // No headers: cloning them for redaction cost more than the rest of the log line, and
        // they are where secrets travel. The request id joins the line to the host agent's.
        // The URL without the secrets a client may wrongly put in it; the caller's request id when it was not kept.
        req: (req) => ({
          id: req.id,
          callerReqId: callerRequestIdOf(req.headers),
          method: req.method,
          url: loggedUrl(req.url),
        }),
        res: (res) => ({ statusCode: res.statusCode }),
      },
    }),
  );

  const browsers = browserRoutes(deps);
  const proxies = proxyRoutes(deps);
  const operational = operationalRoutes(store, () => description, { metricsPublic: deps.metricsPublic });
  const operations = [...operational.operations, ...browsers.operations, ...proxies.operations];
  const description = openApiDocument(operations);

  app.use(operational.router);
  app.use(requireAuth(store));
  app.use(browsers.rawBodyRouter);
  app.use(jsonBody);
  app.use(browsers.router);
  app.use(proxies.router);

  app.use(noRoute(operations));
  app.use((error: unknown, req: express.Request, res: express.Response, _next: express.NextFunction) => {
    sendError(res, error, req.log ?? logger);
  });
  return app;
}
