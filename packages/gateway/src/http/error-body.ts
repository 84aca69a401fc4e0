import type { Response } from "express";
import { ApiError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import { StoreUnavailableError } from "../store/sql-client.ts";

interface BodyParserError {
  type?: string;
  status?: number;
}

/** Classifies anything thrown while serving a request as an ApiError. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof StoreUnavailableError) {
    return new ApiError("store_unavailable", "the store is unavailable; try again shortly", { cause: error });
  }
  const type = (error as BodyParserError | null)?.type;
  if (type === "entity.too.large") return new ApiError("payload_too_large", "request body is larger than 1 MiB");
  if (type === "entity.parse.failed") return new ApiError("invalid_request", "request body is not valid JSON");
  if (type === "encoding.unsupported" || type === "charset.unsupported" || type === "request.aborted") {
    return new ApiError("invalid_request", "request body could not be read");
  }
  // What Express and body-parser refuse on the client's account: a body that is not valid
  // gzip/deflate, a path parameter with broken percent-encoding.
  const status = (error as BodyParserError | null)?.status;
  if (typeof status === "number" && status >= 400 && status < 500) {
    return new ApiError("invalid_request", "the request could not be read (its encoding is invalid)", { cause: error });
  }
  return new ApiError("internal_error", "internal error", { cause: error });
}

/** Writes the Error body and the retry hint the official client honours. */
export function sendError(res: Response, error: unknown, log: Logger): void {
  const apiError = toApiError(error);
  // A bug is an error; an unreachable host, store or free capacity is the operator's to watch.
  if (apiError.code === "internal_error")
    log.error({ err: apiError.cause ?? apiError, code: apiError.code }, apiError.message);
  else if (apiError.status >= 500) log.warn({ err: apiError.cause ?? apiError, code: apiError.code }, apiError.message);
  if (res.headersSent) {
    res.end();
    return;
  }
  const body: Record<string, unknown> = { code: apiError.code, message: apiError.message };
  if (apiError.details) body.details = apiError.details;
  if (apiError.innerError) body.inner_error = apiError.innerError;
  if (apiError.retryAfterSeconds !== undefined) res.setHeader("retry-after", String(apiError.retryAfterSeconds));
  res.status(apiError.status).setHeader("x-should-retry", String(apiError.retry)).json(body);
}
