import { type CallContext, Code, type PressKeyRequest, RpcError } from "@browser-infra/contract";
import {
  DisplayUnavailableError,
  InvalidKeysError,
  type Keyboard,
  NoSpareKeycodeError,
  PressCancelledError,
  PressInterruptedError,
  PressQueueFullError,
} from "../keyboard/index.ts";
import type { BrowserSlot } from "../session/slot.ts";
import { slotRpcError } from "./session-handlers.ts";

export const NO_DISPLAY_MESSAGE =
  "this host has no X display: install Xvfb (apt-get install xvfb) and start it, or set DISPLAY for the host agent";

export interface PressKeyDeps {
  keyboard: Keyboard | undefined;
  slot: BrowserSlot;
  maxPressDurationMs: number;
}

export function pressKeyHandler(deps: PressKeyDeps) {
  const { keyboard, slot } = deps;
  return async (request: PressKeyRequest, context: CallContext): Promise<Record<string, never>> => {
    if (request.durationMs > deps.maxPressDurationMs) {
      throw new RpcError(Code.INVALID_ARGUMENT, `duration: must be at most ${deps.maxPressDurationMs} ms on this host`);
    }
    try {
      slot.require(request.sessionId);
    } catch (error) {
      throw slotRpcError(error);
    }
    if (!keyboard) throw new RpcError(Code.FAILED_PRECONDITION, NO_DISPLAY_MESSAGE);
    try {
      // Queued now, in the same turn as the session check, so a stop that follows cancels it.
      await keyboard.press(
        { keys: request.keys, durationMs: request.durationMs, holdKeys: request.holdKeys },
        context.signal,
      );
      return {};
    } catch (error) {
      if (error instanceof InvalidKeysError) throw new RpcError(Code.INVALID_ARGUMENT, error.problems.join("; "));
      if (error instanceof NoSpareKeycodeError) throw new RpcError(Code.INVALID_ARGUMENT, error.message);
      if (error instanceof DisplayUnavailableError) throw new RpcError(Code.FAILED_PRECONDITION, error.message);
      if (error instanceof PressQueueFullError) throw new RpcError(Code.RESOURCE_EXHAUSTED, error.message);
      if (error instanceof PressCancelledError) throw new RpcError(Code.CANCELLED, error.message);
      if (error instanceof PressInterruptedError) {
        if (slot.shuttingDown) {
          throw new RpcError(
            Code.UNAVAILABLE,
            "press interrupted: the host agent is shutting down; keys were released",
          );
        }
        throw new RpcError(
          Code.ABORTED,
          `press interrupted: browser session ${request.sessionId} was stopped; keys were released`,
        );
      }
      throw error;
    }
  };
}
