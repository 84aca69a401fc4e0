import { status } from "@grpc/grpc-js";

/** gRPC status codes, re-exported so callers need not import grpc-js. */
export const Code = status;
export type Code = status;

/**
 * The one error type that crosses the gRPC link in both directions: a
 * handler throws it to answer with a status, a client rejects with it.
 */
export class RpcError extends Error {
  readonly code: status;

  constructor(code: status, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RpcError";
    this.code = code;
  }

  get codeName(): string {
    return status[this.code] ?? "UNKNOWN";
  }
}
