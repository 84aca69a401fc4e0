import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

const SAFE_ID = /^[\w.:-]{1,128}$/;

/** The caller's sane X-Request-Id, so traces join up; otherwise a new one. */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers["x-request-id"];
  return typeof incoming === "string" && SAFE_ID.test(incoming) ? incoming : randomUUID();
}

/** requestIdOf, also sent back as X-Request-Id. */
export function requestId(req: IncomingMessage, res: ServerResponse): string {
  const id = requestIdOf(req);
  res.setHeader("x-request-id", id);
  return id;
}
