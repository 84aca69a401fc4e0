import type { Readable } from "node:stream";
import {
  type CallContext,
  Code,
  type CreateDirectoryRequest,
  type DeleteDirectoryRequest,
  type DeleteFileRequest,
  type FileInfoResponseSchema,
  type ListFilesRequest,
  type ListFilesResponseSchema,
  type MoveFileRequest,
  type ReadFileRequest,
  type ReadFileResponseSchema,
  RpcError,
  type ServerBidiStream,
  type WriteFileRequest,
  type WriteFileResponseSchema,
} from "@browser-infra/contract";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { createDirectory, deleteDirectory, deleteFile, movePath } from "../filesystem/change-files.ts";
import { type FileInfo, FileInfoError } from "../filesystem/file-info.ts";
import { FsError, type FsProblem, fsErrorOf } from "../filesystem/fs-error.ts";
import { listFiles } from "../filesystem/list-files.ts";
import { openForReading } from "../filesystem/read-file.ts";
import { beginWrite } from "../filesystem/write-file.ts";
import type { BrowserSlot } from "../session/slot.ts";
import { slotRpcError } from "./session-handlers.ts";

const PROBLEM_CODES: Record<FsProblem, Code> = {
  invalid_path: Code.INVALID_ARGUMENT,
  invalid_argument: Code.INVALID_ARGUMENT,
  not_found: Code.NOT_FOUND,
  forbidden: Code.PERMISSION_DENIED,
  exists: Code.ALREADY_EXISTS,
  is_directory: Code.FAILED_PRECONDITION,
  not_directory: Code.FAILED_PRECONDITION,
  not_regular_file: Code.FAILED_PRECONDITION,
  no_space: Code.RESOURCE_EXHAUSTED,
};

/** File and slot errors as gRPC statuses; anything else stays an internal error. */
function rpcErrorOf(error: unknown): unknown {
  if (error instanceof FsError || error instanceof FileInfoError) {
    return new RpcError(PROBLEM_CODES[error.problem], error.message);
  }
  return slotRpcError(error);
}

async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw rpcErrorOf(error);
  }
}

function requireSession(slot: BrowserSlot, sessionId: string): void {
  try {
    slot.require(sessionId);
  } catch (error) {
    throw slotRpcError(error);
  }
}

/**
 * Ties a transfer to the running session: `ended` is aborted, with the status the call ends with,
 * first thing when the session is fenced. Returns the release.
 */
function holdSession(slot: BrowserSlot, sessionId: string, ended: AbortController): () => void {
  try {
    return slot.hold(sessionId, (reason) =>
      ended.abort(new RpcError(Code.ABORTED, `browser session ${sessionId} ended: ${reason}`)),
    );
  } catch (error) {
    throw slotRpcError(error);
  }
}

const NS_PER_SECOND = 1_000_000_000n;

/** Floors toward minus infinity so times before 1970 keep 0 <= nanos < 1e9. */
function timestampFromNs(ns: bigint): { seconds: bigint; nanos: number } {
  const nanos = ((ns % NS_PER_SECOND) + NS_PER_SECOND) % NS_PER_SECOND;
  return { seconds: (ns - nanos) / NS_PER_SECOND, nanos: Number(nanos) };
}

function fileInfoMessage(info: FileInfo): MessageInitShape<typeof FileInfoResponseSchema> {
  return {
    name: info.name,
    path: info.path,
    sizeBytes: info.sizeBytes,
    isDir: info.isDir,
    mode: info.mode,
    modTime: timestampFromNs(info.modTimeNs),
  };
}

/**
 * The caller's next message, or undefined once it half-closed. The stream is paused again after
 * each message, so nothing more is read (and HTTP/2 flow control holds the caller back) until the
 * handler asks for the next one.
 */
function nextMessage<T>(stream: Readable, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.reject(signal.reason);
  if (stream.readableEnded) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const settle = (outcome: () => void) => {
      stream.off("data", onData);
      stream.off("end", onEnd);
      signal.removeEventListener("abort", onAbort);
      outcome();
    };
    const onData = (message: T) => {
      stream.pause();
      settle(() => resolve(message));
    };
    const onEnd = () => settle(() => resolve(undefined));
    const onAbort = () => settle(() => reject(signal.reason));
    stream.on("data", onData);
    stream.once("end", onEnd);
    signal.addEventListener("abort", onAbort, { once: true });
    stream.resume();
  });
}

type ReadStream = ServerBidiStream<ReadFileRequest, MessageInitShape<typeof ReadFileResponseSchema>>;
type WriteStream = ServerBidiStream<WriteFileRequest, MessageInitShape<typeof WriteFileResponseSchema>>;

/**
 * Sends the file's pieces as the caller takes them: the file is read no faster than the stream
 * drains. Resolves with the number of bytes sent; rejects with stop's reason when it aborts.
 */
function sendContents(contents: Readable, stream: ReadStream, stop: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let done = false;
    const finish = (error?: unknown) => {
      if (done) return;
      done = true;
      stop.removeEventListener("abort", onStop);
      if (error === undefined) {
        resolve(sent);
        return;
      }
      contents.destroy();
      reject(error);
    };
    const onStop = () => finish(stop.reason);
    contents.on("data", (chunk: Buffer) => {
      if (done) return;
      sent += chunk.length;
      if (stream.write({ chunk })) return;
      contents.pause();
      stream.once("drain", () => {
        if (!done) contents.resume();
      });
    });
    contents.once("end", () => finish());
    contents.once("error", (error) => finish(error));
    if (stop.aborted) {
      finish(stop.reason);
      return;
    }
    stop.addEventListener("abort", onStop, { once: true });
  });
}

export function fsHandlers(slot: BrowserSlot) {
  /** A change to the file system, checked against the slot again right before it is made. */
  const change = async (sessionId: string, work: (beforeChange: () => void) => Promise<void>): Promise<object> => {
    requireSession(slot, sessionId);
    await mapped(() => work(() => slot.require(sessionId)));
    return {};
  };

  return {
    listFiles: async (request: ListFilesRequest): Promise<MessageInitShape<typeof ListFilesResponseSchema>> => {
      requireSession(slot, request.sessionId);
      const files = await mapped(() => listFiles(request.path));
      return { files: files.map(fileInfoMessage) };
    },

    deleteFile: (request: DeleteFileRequest) =>
      change(request.sessionId, (beforeChange) => deleteFile(request.path, beforeChange)),

    deleteDirectory: (request: DeleteDirectoryRequest) =>
      change(request.sessionId, (beforeChange) => deleteDirectory(request.path, beforeChange)),

    createDirectory: (request: CreateDirectoryRequest) =>
      change(request.sessionId, (beforeChange) => createDirectory(request.path, request.mode, beforeChange)),

    moveFile: (request: MoveFileRequest) =>
      change(request.sessionId, (beforeChange) => movePath(request.srcPath, request.destPath, beforeChange)),

    /**
     * The caller sends one request; the agent answers with the file's size, then its pieces, and
     * ends the call. A session fenced meanwhile ends it with ABORTED, a file truncated meanwhile
     * with DATA_LOSS: a caller told the size never takes a short file for the whole one.
     */
    readFile: async (stream: ReadStream, context: CallContext): Promise<void> => {
      const request = await nextMessage<ReadFileRequest>(stream, context.signal);
      if (!request?.sessionId) throw new RpcError(Code.INVALID_ARGUMENT, "the first message must name the session");
      const ended = new AbortController();
      const release = holdSession(slot, request.sessionId, ended);
      try {
        const stop = AbortSignal.any([ended.signal, context.signal]);
        const file = await mapped(() => openForReading(request.path));
        try {
          stop.throwIfAborted();
          stream.write({ sizeBytes: BigInt(file.sizeBytes) });
          const sent = await sendContents(file.contents(), stream, stop).catch((error: unknown) => {
            throw rpcErrorOf(fsErrorOf(error, file.path));
          });
          if (sent < file.sizeBytes) {
            throw new RpcError(
              Code.DATA_LOSS,
              `${file.path} was truncated while it was read (${sent} of ${file.sizeBytes} bytes)`,
            );
          }
        } finally {
          await file.close();
        }
      } finally {
        release();
      }
    },

    /**
     * The caller sends the header (session, path, mode), then the pieces, then half-closes; the
     * agent answers once, with the size written, after the file took its path. Cut short in any
     * way (the caller aborts or cancels, the session is fenced, a write fails), the file is not
     * written; the call's error status is sent only after the temporary file was removed.
     */
    writeFile: async (stream: WriteStream, context: CallContext): Promise<void> => {
      const header = await nextMessage<WriteFileRequest>(stream, context.signal);
      if (!header?.sessionId) {
        throw new RpcError(Code.INVALID_ARGUMENT, "the first message must name the session and the path");
      }
      const ended = new AbortController();
      const release = holdSession(slot, header.sessionId, ended);
      try {
        const stop = AbortSignal.any([ended.signal, context.signal]);
        const file = await mapped(() => beginWrite(header.path, header.mode, stop));
        try {
          let message: WriteFileRequest | undefined = header;
          while (message) {
            if (message.abort) throw new RpcError(Code.CANCELLED, "the caller gave the write up");
            const { chunk } = message;
            if (chunk.length > 0) await mapped(() => file.append(chunk));
            message = await nextMessage<WriteFileRequest>(stream, stop);
          }
          const sizeBytes = await mapped(() => file.commit());
          stream.write({ sizeBytes: BigInt(sizeBytes) });
        } catch (error) {
          file.discard();
          throw error;
        }
      } finally {
        release();
      }
    },
  };
}
