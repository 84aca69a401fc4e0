import express, { type Express } from "express";
import { pinoHttp } from "pino-http";
import { requireAuth } from "../auth/require-auth.ts";
import { browserRoutes } from "../browsers/routes.ts";
import { ApiError } from "../errors.ts";
import type { HostPool } from "../hosts/host-pool.ts";
import type { Logger } from "../logger.ts";
import { httpMetrics } from "../metrics/http-metrics.ts";
import { serveMetrics } from "../metrics/metrics-route.ts";
import { proxyRoutes } from "../proxies/routes.ts";
import type { Store } from "../store/store.ts";
import { sendError } from "./error-body.ts";
import { jsonBody } from "./json-body.ts";
import { requestId } from "./request-id.ts";

export interface AppDeps {
  store: Store;
  hosts: HostPool;
  logger: Logger;
  agentTimeoutMs: number;
  maxPressDurationMs: number;
  /** Seals custom proxy secrets at rest; see proxies/secrets-key.ts for where it comes from. */
  secretsKey: Buffer;
  /** What a proxy health check fetches through the proxy when the caller names no url. */
  proxyCheckUrl: string;
}

const READY_TIMEOUT_MS = 2_000;

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
      customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? "error" : "info"),
      serializers: {
        req: (req) => ({ id: req.id, method: req.method, url: req.url, headers: req.headers }),
      },
    }),
  );

  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", async (_req, res) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ApiError("store_unavailable", "the store did not answer")), READY_TIMEOUT_MS);
    });
    try {
      await Promise.race([store.ping(), timeout]);
    } finally {
      clearTimeout(timer);
    }
    res.json({ status: "ready" });
  });
  app.get("/metrics", serveMetrics);

  app.use(requireAuth(store));
  app.use(jsonBody);
  app.use(browserRoutes(deps));
  app.use(proxyRoutes(deps));

  app.use((req) => {
    throw new ApiError("not_found", `no route for ${req.method} ${req.path}`);
  });
  app.use((error: unknown, req: express.Request, res: express.Response, _next: express.NextFunction) => {
    sendError(res, error, req.log ?? logger);
  });
  return app;
}
