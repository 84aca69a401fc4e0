import { Code, RpcError } from "@browser-infra/contract";
import type { BrowserSlot } from "../session/slot.ts";

// SCAFFOLD (replaced by the screenshot work of issue #16).
export function screenshotHandlers(_slot: BrowserSlot) {
  return {
    captureScreenshot: async (): Promise<never> => {
      throw new RpcError(Code.UNIMPLEMENTED, "not built yet");
    },
  };
}
