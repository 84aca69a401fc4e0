import type { Request, Response } from "express";
import { registry } from "./registry.ts";
// Registered from the start, so the family is described even before the first health check.
import "./host-health.ts";

/** GET /metrics: this replica's metrics in the Prometheus text format. */
export async function serveMetrics(_req: Request, res: Response): Promise<void> {
  const body = await registry.metrics();
  res.set("content-type", registry.contentType).send(body);
}
