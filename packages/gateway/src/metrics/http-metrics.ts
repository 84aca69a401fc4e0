import type { NextFunction, Request, Response } from "express";
import { Counter, Histogram } from "prom-client";
import { LATENCY_BUCKETS, registry } from "./registry.ts";

const labelNames = ["method", "route", "status"] as const;

const requests = new Counter({
  name: "gateway_http_requests_total",
  help: "HTTP requests answered, by method, route pattern and status",
  labelNames,
  registers: [registry],
});

const duration = new Histogram({
  name: "gateway_http_request_duration_seconds",
  help: "Time from the request's arrival to the end of its response, by method, route pattern and status",
  labelNames,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

/**
 * The Express route pattern (`/browsers/:id_or_name/fs/file_info`), never
 * the URL, so ids and names cannot grow the label set without bound.
 * Requests no route took (unknown paths, or refused by authentication
 * before routing) share one label. Routers are mounted at the root, so
 * the route's own path is the whole pattern.
 */
function routeOf(req: Request): string {
  const path = req.route?.path;
  return typeof path === "string" ? `${req.baseUrl}${path}` : "unmatched";
}

/** Counts and times every request once its response is over (or the client went away). */
export function httpMetrics(req: Request, res: Response, next: NextFunction): void {
  const started = process.hrtime.bigint();
  res.once("close", () => {
    const labels = {
      method: req.method,
      route: routeOf(req),
      // A client that disconnects before the end never sees a status.
      status: res.writableFinished ? String(res.statusCode) : "aborted",
    };
    requests.inc(labels);
    duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
  });
  next();
}
