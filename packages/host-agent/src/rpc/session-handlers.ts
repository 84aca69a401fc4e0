import {
  type CallContext,
  Code,
  RpcError,
  type StartSessionRequest,
  type StartSessionResponseSchema,
  type StopSessionRequest,
  type StopSessionResponseSchema,
  type WaitSessionEndRequest,
  type WaitSessionEndResponseSchema,
} from "@browser-infra/contract";
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  BrowserLaunchError,
  type BrowserSlot,
  SessionNotRunningError,
  ShuttingDownError,
  SlotBusyError,
} from "../session/slot.ts";

/** The slot's errors as gRPC statuses; anything else stays an internal error. */
export function slotRpcError(error: unknown): unknown {
  if (error instanceof SessionNotRunningError) return new RpcError(Code.ABORTED, error.message);
  if (error instanceof SlotBusyError) return new RpcError(Code.FAILED_PRECONDITION, error.message);
  // Both take the host out of the gateways' pool at once (a host that cannot serve, not a busy one).
  if (error instanceof BrowserLaunchError || error instanceof ShuttingDownError) {
    return new RpcError(Code.UNAVAILABLE, error.message);
  }
  return error;
}

function requireSessionId(sessionId: string): void {
  if (sessionId === "") throw new RpcError(Code.INVALID_ARGUMENT, "session_id is required");
}

export function sessionHandlers(slot: BrowserSlot) {
  return {
    startSession: async (
      request: StartSessionRequest,
    ): Promise<MessageInitShape<typeof StartSessionResponseSchema>> => {
      requireSessionId(request.sessionId);
      try {
        const info = await slot.start(request.sessionId, request.proxy);
        return {
          cdpWsUrl: info.cdpWsUrl,
          headless: info.headless,
          viewportWidth: info.viewport?.width ?? 0,
          viewportHeight: info.viewport?.height ?? 0,
          agentInstance: info.agentInstance,
        };
      } catch (error) {
        throw slotRpcError(error);
      }
    },
    stopSession: async (request: StopSessionRequest): Promise<MessageInitShape<typeof StopSessionResponseSchema>> => {
      requireSessionId(request.sessionId);
      return { wasRunning: await slot.stop(request.sessionId, request.reason || undefined) };
    },
    waitSessionEnd: async (
      request: WaitSessionEndRequest,
      context: CallContext,
    ): Promise<MessageInitShape<typeof WaitSessionEndResponseSchema>> => {
      requireSessionId(request.sessionId);
      return { reason: await slot.waitEnd(request.sessionId, context.signal), agentInstance: slot.instance };
    },
  };
}
