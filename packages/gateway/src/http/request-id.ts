import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

const SAFE_ID = /^[\w.:-]{1,128}$/;

/** Keeps a caller's sane X-Request-Id so traces join up; otherwise makes one. */
export function requestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers["x-request-id"];
  const id = typeof incoming === "string" && SAFE_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader("x-request-id", id);
  return id;
}
