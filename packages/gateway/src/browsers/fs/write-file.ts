import type { Readable } from "node:stream";
import {
  type ClientBidiStream,
  Code,
  RpcError,
  toRpcError,
  type WriteFileRequestSchema,
  type WriteFileResponse,
} from "@browser-infra/contract";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceError } from "@grpc/grpc-js";
import type { Principal } from "../../auth/api-keys.ts";
import { ApiError } from "../../errors.ts";
import type { BrowserSessionRecord } from "../../store/browser-sessions.ts";
import type { BrowserDeps } from "../file-info.ts";
import { useSession } from "../use-session.ts";
import { fsCallError } from "./fs-errors.ts";
import type { WriteFileQuery } from "./schemas.ts";

type WriteStream = ClientBidiStream<MessageInitShape<typeof WriteFileRequestSchema>, WriteFileResponse>;

/** MAX_UPLOAD_BYTES's default: 1 GiB. */
export const DEFAULT_MAX_UPLOAD_BYTES = 1024 ** 3;

export interface WriteFileDeps extends BrowserDeps {
  /** The largest body write_file takes; unset: DEFAULT_MAX_UPLOAD_BYTES. */
  maxUploadBytes?: number;
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError("payload_too_large", `the file is larger than ${maxBytes} bytes (MAX_UPLOAD_BYTES)`);
}

/**
 * The agent's answer: the size written, once the file took its path. A write is all or nothing
 * on the agent (a temporary file renamed at the end), so a failed one wrote nothing and a retry
 * is safe.
 */
function agentAnswer(stream: WriteStream, session: BrowserSessionRecord): Promise<number> {
  const answer = new Promise<number>((resolve, reject) => {
    let size: number | undefined;
    stream.on("data", (response: WriteFileResponse) => {
      size = Number(response.sizeBytes);
    });
    stream.on("error", (error: ServiceError) => reject(fsCallError(toRpcError(error), session, false)));
    // After a failure it comes too, once the promise was settled by it.
    stream.on("end", () => {
      if (size !== undefined) resolve(size);
      else
        reject(
          fsCallError(new RpcError(Code.INTERNAL, "the host agent ended the write without an answer"), session, false),
        );
    });
  });
  // The body may still be read when the agent fails: the failure is heard by whoever awaits next.
  answer.catch(() => undefined);
  return answer;
}

/**
 * Carries the body to the agent piece by piece, reading it no faster than the agent's stream
 * drains. Settles when the body ended (with its size), or fails at once when the agent failed,
 * the body passed maxBytes, or the client went away.
 */
function sendBody(
  body: Readable,
  stream: WriteStream,
  maxBytes: number,
  answer: Promise<number>,
  signal: AbortSignal,
): Promise<number> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let done = false;
    const finish = (error?: unknown) => {
      if (done) return;
      done = true;
      body.off("data", onData);
      body.off("end", onEnd);
      body.off("close", onClose);
      body.off("error", onClose);
      signal.removeEventListener("abort", onClose);
      if (error === undefined) {
        resolve(sent);
        return;
      }
      // What the client still sends is read and dropped, so that its connection can carry the
      // answer and the next request.
      body.resume();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      sent += chunk.length;
      if (sent > maxBytes) {
        finish(tooLarge(maxBytes));
        return;
      }
      if (stream.write({ chunk })) return;
      body.pause();
      stream.once("drain", () => {
        if (!done) body.resume();
      });
    };
    const onEnd = () => finish();
    // Closed before its end, or failed: the client is gone (or timed out); nobody hears the answer.
    const onClose = () => finish(new ApiError("invalid_request", "the request body was cut off"));
    answer.catch((error: unknown) => finish(error));
    body.on("data", onData);
    body.once("end", onEnd);
    body.once("close", onClose);
    body.once("error", onClose);
    if (signal.aborted) onClose();
    else signal.addEventListener("abort", onClose, { once: true });
  });
}

/**
 * Writes `body` to a file of the session's host, streamed: it never sits in the gateway whole.
 * The file appears at its path only once all of it was written; a body larger than maxUploadBytes
 * (by its Content-Length at once, else when it passes the limit), a client that goes away, or a
 * session that ends meanwhile leaves no file.
 */
export async function writeFile(
  deps: WriteFileDeps,
  principal: Principal,
  idOrName: string,
  query: WriteFileQuery,
  body: Readable,
  declaredBytes: number | undefined,
  requestId: string,
  signal: AbortSignal,
): Promise<number> {
  const session = await useSession(deps.store, principal, idOrName);
  const maxBytes = deps.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES;
  if (declaredBytes !== undefined && declaredBytes > maxBytes) throw tooLarge(maxBytes);
  const stream: WriteStream = deps.hosts.client(session.hostAddress).writeFile({ requestId });
  const answer = agentAnswer(stream, session);
  try {
    stream.write({ sessionId: session.id, path: query.path, mode: query.mode ?? "" });
    await sendBody(body, stream, maxBytes, answer, signal);
    stream.end();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(fsCallError(new RpcError(Code.DEADLINE_EXCEEDED, "no answer"), session, false)),
        deps.agentTimeoutMs,
      );
    });
    try {
      return await Promise.race([answer, late]);
    } finally {
      clearTimeout(timer);
    }
  } catch (error) {
    await giveUp(stream, answer, deps.agentTimeoutMs);
    throw error;
  }
}

/**
 * Tells the agent to discard what it wrote so far and waits (at most timeoutMs) until it did, so
 * that a caller told the write failed finds no temporary file beside the path. An agent that
 * failed the write itself has discarded already; one that does not answer in time is cancelled.
 */
async function giveUp(stream: WriteStream, answer: Promise<number>, timeoutMs: number): Promise<void> {
  if (stream.writable) stream.end({ abort: true });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  try {
    await Promise.race([
      answer.then(
        () => undefined,
        () => undefined,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
    stream.cancel();
  }
}
