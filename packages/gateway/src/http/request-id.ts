import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { keptRequestId, refusedRequestId } from "@browser-infra/contract";
import { maskApiKeys } from "./log-redaction.ts";

/**
 * The caller's X-Request-Id when it has the one shape a request id may have (see the contract's
 * keptRequestId; the host agent applies the same rule), so traces join up; otherwise a new one.
 */
export function requestIdOf(req: IncomingMessage): string {
  return keptRequestId(req.headers["x-request-id"]) ?? randomUUID();
}

/** requestIdOf, also sent back as X-Request-Id. */
export function requestId(req: IncomingMessage, res: ServerResponse): string {
  const id = requestIdOf(req);
  res.setHeader("x-request-id", id);
  return id;
}

/**
 * The caller's X-Request-Id when requestIdOf did not keep it, for the log line to show beside the
 * generated id: cut short, any API key in it masked.
 */
export function callerRequestIdOf(headers: IncomingHttpHeaders): string | undefined {
  const refused = refusedRequestId(headers["x-request-id"]);
  return refused === undefined ? undefined : maskApiKeys(refused);
}
