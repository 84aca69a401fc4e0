import { Code, RpcError } from "@browser-infra/contract";
import type { BrowserSlot } from "../session/slot.ts";

// SCAFFOLD (replaced by the files work of issue #16).
const unbuilt = async (): Promise<never> => {
  throw new RpcError(Code.UNIMPLEMENTED, "not built yet");
};

export function fsHandlers(_slot: BrowserSlot) {
  return {
    listFiles: unbuilt,
    readFile: unbuilt,
    writeFile: unbuilt,
    deleteFile: unbuilt,
    deleteDirectory: unbuilt,
    createDirectory: unbuilt,
    moveFile: unbuilt,
  };
}
