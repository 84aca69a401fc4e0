import { Code, RpcError } from "@browser-infra/contract";
import type { Keyboard } from "../keyboard/index.ts";
import type { BrowserSlot } from "../session/slot.ts";

// SCAFFOLD (replaced by the mouse and typing work of issue #16).
const unbuilt = async (): Promise<never> => {
  throw new RpcError(Code.UNIMPLEMENTED, "not built yet");
};

export function inputHandlers(_deps: { keyboard: Keyboard | undefined; slot: BrowserSlot }) {
  return {
    moveMouse: unbuilt,
    clickMouse: unbuilt,
    dragMouse: unbuilt,
    scroll: unbuilt,
    getMousePosition: unbuilt,
    typeText: unbuilt,
  };
}
