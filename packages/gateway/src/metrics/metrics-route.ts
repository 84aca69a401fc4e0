import { BlockList, isIPv4 } from "node:net";
import type { Request, RequestHandler, Response } from "express";
import { ApiError } from "../errors.ts";
import { registry } from "./registry.ts";
// Registered from the start, so the family is described even before the first health check.
import "./host-health.ts";

/** 127.0.0.0/8 and ::1; the check also matches IPv4-mapped addresses (::ffff:127.0.0.1). */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/** Whether the socket's peer is on this machine's loopback interface. */
export function isLoopback(address: string | undefined): boolean {
  return address !== undefined && LOOPBACK.check(address, isIPv4(address) ? "ipv4" : "ipv6");
}

/**
 * GET /metrics: this replica's metrics in the Prometheus text format. They name the host agents
 * and count requests per route, so unless `metricsPublic` only a client on this machine's loopback
 * gets them; any other is answered as if there were no such route, which tells a scanner nothing.
 * By the socket's address, never a forwarded header a client could write.
 */
export function serveMetrics(options: { metricsPublic: boolean }): RequestHandler {
  return async (req: Request, res: Response) => {
    if (!options.metricsPublic && !isLoopback(req.socket.remoteAddress)) {
      throw new ApiError("not_found", `no route for ${req.method} ${req.path}`);
    }
    const body = await registry.metrics();
    res.set("content-type", registry.contentType).send(body);
  };
}
