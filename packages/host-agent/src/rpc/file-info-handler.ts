import { Code, type FileInfoRequest, type FileInfoResponseSchema, RpcError } from "@browser-infra/contract";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { FileInfoError, type FileInfoProblem, fileInfo } from "../filesystem/file-info.ts";
import type { BrowserSlot } from "../session/slot.ts";
import { slotRpcError } from "./session-handlers.ts";

const PROBLEM_CODES: Record<FileInfoProblem, Code> = {
  invalid_path: Code.INVALID_ARGUMENT,
  not_found: Code.NOT_FOUND,
  forbidden: Code.PERMISSION_DENIED,
};

const NS_PER_SECOND = 1_000_000_000n;

/** Floors toward minus infinity so times before 1970 keep 0 <= nanos < 1e9. */
function timestampFromNs(ns: bigint): { seconds: bigint; nanos: number } {
  const nanos = ((ns % NS_PER_SECOND) + NS_PER_SECOND) % NS_PER_SECOND;
  return { seconds: (ns - nanos) / NS_PER_SECOND, nanos: Number(nanos) };
}

export const fileInfoHandler =
  (slot: BrowserSlot) =>
  async (request: FileInfoRequest): Promise<MessageInitShape<typeof FileInfoResponseSchema>> => {
    try {
      slot.require(request.sessionId);
    } catch (error) {
      throw slotRpcError(error);
    }
    return handleFileInfo(request);
  };

async function handleFileInfo(request: FileInfoRequest): Promise<MessageInitShape<typeof FileInfoResponseSchema>> {
  try {
    const info = await fileInfo(request.path);
    return {
      name: info.name,
      path: info.path,
      sizeBytes: info.sizeBytes,
      isDir: info.isDir,
      mode: info.mode,
      modTime: timestampFromNs(info.modTimeNs),
    };
  } catch (error) {
    if (error instanceof FileInfoError) throw new RpcError(PROBLEM_CODES[error.problem], error.message);
    throw error;
  }
}
