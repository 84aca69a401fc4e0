import { Code, type PressKeyRequest, RpcError } from "@browser-infra/contract";
import {
  DisplayUnavailableError,
  InvalidKeysError,
  type Keyboard,
  NoSpareKeycodeError,
  PressInterruptedError,
} from "../keyboard/index.ts";

export const NO_DISPLAY_MESSAGE =
  "this host has no X display: install Xvfb (apt-get install xvfb) and start it, or set DISPLAY for the host agent";

export function pressKeyHandler(keyboard: Keyboard | undefined) {
  return async (request: PressKeyRequest): Promise<Record<string, never>> => {
    if (!keyboard) throw new RpcError(Code.FAILED_PRECONDITION, NO_DISPLAY_MESSAGE);
    try {
      await keyboard.press({ keys: request.keys, durationMs: request.durationMs, holdKeys: request.holdKeys });
      return {};
    } catch (error) {
      if (error instanceof InvalidKeysError) throw new RpcError(Code.INVALID_ARGUMENT, error.problems.join("; "));
      if (error instanceof NoSpareKeycodeError) throw new RpcError(Code.INVALID_ARGUMENT, error.message);
      if (error instanceof DisplayUnavailableError) throw new RpcError(Code.FAILED_PRECONDITION, error.message);
      if (error instanceof PressInterruptedError) {
        throw new RpcError(Code.ABORTED, "press interrupted: the host agent is shutting down; keys were released");
      }
      throw error;
    }
  };
}
