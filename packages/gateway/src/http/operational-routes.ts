import { z } from "zod";
import { ApiError } from "../errors.ts";
import { serveMetrics } from "../metrics/metrics-route.ts";
import type { Store } from "../store/store.ts";
import { ApiRouter } from "./api-router.ts";

const READY_TIMEOUT_MS = 2_000;
const TAG = "Operations";

/**
 * What load balancers, Prometheus and tooling call, without an API key:
 * liveness, readiness (the store answers), metrics and the API description.
 * Metrics answer loopback clients only, unless `metricsPublic` (METRICS_PUBLIC).
 */
export function operationalRoutes(
  store: Store,
  apiDescription: () => unknown,
  options: { metricsPublic: boolean },
): ApiRouter {
  const api = new ApiRouter();

  api.add(
    {
      method: "get",
      path: "/healthz",
      operationId: "getHealthz",
      tag: TAG,
      summary: "The process is alive",
      authenticated: false,
      response: { status: 200, description: "Alive", schema: z.object({ status: z.literal("ok") }) },
      errors: [],
    },
    (_req, res) => {
      res.json({ status: "ok" });
    },
  );

  api.add(
    {
      method: "get",
      path: "/readyz",
      operationId: "getReadyz",
      tag: TAG,
      summary: "The gateway can serve: its store answers",
      authenticated: false,
      response: { status: 200, description: "Ready", schema: z.object({ status: z.literal("ready") }) },
      errors: [503],
    },
    async (_req, res) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new ApiError("store_unavailable", "the store did not answer")),
          READY_TIMEOUT_MS,
        );
      });
      try {
        await Promise.race([store.ping(), timeout]);
      } finally {
        clearTimeout(timer);
      }
      res.json({ status: "ready" });
    },
  );

  api.add(
    {
      method: "get",
      path: "/metrics",
      operationId: "getMetrics",
      tag: TAG,
      summary: "Prometheus metrics (to loopback clients only, unless METRICS_PUBLIC=true)",
      authenticated: false,
      response: {
        status: 200,
        description: "The Prometheus text format",
        schema: z.string(),
        contentType: "text/plain; version=0.0.4",
      },
      errors: [404],
    },
    serveMetrics(options),
  );

  api.add(
    {
      method: "get",
      path: "/openapi.json",
      operationId: "getOpenapiJson",
      tag: TAG,
      summary: "This API's OpenAPI 3.1 description",
      authenticated: false,
      response: { status: 200, description: "The OpenAPI document", schema: z.record(z.string(), z.unknown()) },
      errors: [],
    },
    (_req, res) => {
      res.json(apiDescription());
    },
  );

  return api;
}
