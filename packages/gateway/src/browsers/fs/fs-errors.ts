import { Code, RpcError } from "@browser-infra/contract";
import { ApiError } from "../../errors.ts";
import { hostCallError } from "../../hosts/host-errors.ts";
import type { BrowserSessionRecord } from "../../store/browser-sessions.ts";

/**
 * A failed files call on the session's host as the API's error: what is in the way (an existing
 * entry, a directory where a file is expected or the reverse) is a 409 conflict, a full disk a
 * 507; the rest as every host call (see hostCallError). `mayHaveActed`: the call may have changed
 * files, so the client must not retry it on its own.
 */
export function fsCallError(error: unknown, session: BrowserSessionRecord, mayHaveActed: boolean): ApiError {
  if (error instanceof RpcError) {
    if (error.code === Code.ALREADY_EXISTS || error.code === Code.FAILED_PRECONDITION) {
      return new ApiError("conflict", error.message, { cause: error });
    }
    if (error.code === Code.RESOURCE_EXHAUSTED) {
      return new ApiError("insufficient_storage", error.message, { cause: error });
    }
  }
  return hostCallError(error, session.hostAddress, mayHaveActed, session.id);
}
