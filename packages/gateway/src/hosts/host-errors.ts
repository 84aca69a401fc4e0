import { Code, RpcError } from "@browser-infra/contract";
import { ApiError, type ErrorCode } from "../errors.ts";

const CODE_MAP = new Map<Code, ErrorCode>([
  [Code.UNAVAILABLE, "host_unavailable"],
  // The agent does not run the session (any more): it was stopped, or its browser died.
  [Code.ABORTED, "not_found"],
  // Too many presses wait on the host already; nothing was pressed.
  [Code.RESOURCE_EXHAUSTED, "too_many_requests"],
  [Code.DEADLINE_EXCEEDED, "host_timeout"],
  [Code.NOT_FOUND, "not_found"],
  [Code.PERMISSION_DENIED, "forbidden"],
  [Code.INVALID_ARGUMENT, "bad_request"],
  [Code.FAILED_PRECONDITION, "display_unavailable"],
]);

/**
 * Turns a failed host agent call into the API's error. `mayHaveActed` says the
 * call may have had an effect on the host, so a retry is unsafe.
 */
export function hostCallError(error: unknown, address: string, mayHaveActed = false, sessionId?: string): ApiError {
  if (!(error instanceof RpcError)) {
    return new ApiError("internal_error", "host agent call failed", { cause: error, retry: !mayHaveActed });
  }
  const code = CODE_MAP.get(error.code) ?? "internal_error";
  const unsafe = { retry: mayHaveActed ? false : undefined, cause: error };
  switch (code) {
    case "host_unavailable":
      return new ApiError(code, `host agent ${address} is unreachable`, unsafe);
    case "host_timeout":
      return new ApiError(code, `host agent ${address} did not answer in time`, unsafe);
    case "not_found":
      if (error.code === Code.ABORTED) {
        return new ApiError(code, `browser session "${sessionId ?? "?"}" has ended: ${error.message}`, unsafe);
      }
      return new ApiError(code, error.message, unsafe);
    case "too_many_requests":
      // Nothing was pressed, so a retry is safe whatever the call was.
      return new ApiError(code, error.message, { retry: true, retryAfterSeconds: 1, cause: error });
    case "bad_request":
      return new ApiError(code, error.message, { details: [{ code: "invalid_input", message: error.message }] });
    case "internal_error":
      return new ApiError(code, "host agent failed", unsafe);
    default:
      return new ApiError(code, error.message, unsafe);
  }
}
