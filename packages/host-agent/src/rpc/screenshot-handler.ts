import {
  type CallContext,
  type CaptureScreenshotRequest,
  type CaptureScreenshotResponseSchema,
  Code,
  RpcError,
} from "@browser-infra/contract";
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  CaptureQueueFullError,
  RegionOutsideScreenError,
  Screenshots,
  ScreenUnavailableError,
} from "../screenshot/index.ts";
import type { BrowserSlot } from "../session/slot.ts";
import { slotRpcError } from "./session-handlers.ts";

/** CaptureScreenshot: the session's screen (X display, or its headless browser through CDP) as PNG. */
export function screenshotHandlers(deps: { slot: BrowserSlot; display: string | undefined }) {
  const screenshots = new Screenshots(deps);
  return {
    captureScreenshot: async (
      request: CaptureScreenshotRequest,
      context: CallContext,
    ): Promise<MessageInitShape<typeof CaptureScreenshotResponseSchema>> => {
      try {
        return await screenshots.capture(request.sessionId, request.region, context.signal);
      } catch (error) {
        if (error instanceof RegionOutsideScreenError) throw new RpcError(Code.INVALID_ARGUMENT, error.message);
        if (error instanceof ScreenUnavailableError) throw new RpcError(Code.FAILED_PRECONDITION, error.message);
        if (error instanceof CaptureQueueFullError) throw new RpcError(Code.RESOURCE_EXHAUSTED, error.message);
        if (context.signal.aborted) throw new RpcError(Code.CANCELLED, "the screenshot was cancelled by its caller");
        throw slotRpcError(error);
      }
    },
  };
}
