import { Readable } from "node:stream";
import {
  type ClientBidiStream,
  Code,
  type ReadFileRequestSchema,
  type ReadFileResponse,
  RpcError,
  toRpcError,
} from "@browser-infra/contract";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceError } from "@grpc/grpc-js";
import type { Principal } from "../../auth/api-keys.ts";
import { ApiError } from "../../errors.ts";
import type { BrowserSessionRecord } from "../../store/browser-sessions.ts";
import type { BrowserDeps } from "../file-info.ts";
import { useSession } from "../use-session.ts";
import { fsCallError } from "./fs-errors.ts";
import type { PathQuery } from "./schemas.ts";

type ReadStream = ClientBidiStream<MessageInitShape<typeof ReadFileRequestSchema>, ReadFileResponse>;

/** A file of the session's host being read: its size, known before the first byte, and its bytes. */
export interface FileDownload {
  sizeBytes: number;
  /**
   * The file's bytes as the agent sends them, read from the agent no faster than they are
   * consumed (HTTP/2 flow control holds the agent back, which holds its disk reads). It fails
   * when the session ends meanwhile, the agent is lost, or fewer bytes come than sizeBytes;
   * destroying it cancels the agent's read.
   */
  contents: Readable;
}

/**
 * The bytes of one agent stream. Each of the agent's messages is one piece: pushed as it comes,
 * the agent's stream paused whenever the buffer is full and resumed when it is read.
 */
class AgentFileContents extends Readable {
  readonly #stream: ReadStream;
  readonly #session: BrowserSessionRecord;
  #expected: number | undefined;
  #received = 0;
  #over = false;
  readonly sized: Promise<number>;

  constructor(stream: ReadStream, session: BrowserSessionRecord) {
    super();
    this.#stream = stream;
    this.#session = session;
    let sized!: { resolve: (size: number) => void; reject: (error: unknown) => void };
    this.sized = new Promise((resolve, reject) => {
      sized = { resolve, reject };
    });
    // Whoever waits for the size hears the failure; a failure before anyone waits must not be unhandled.
    this.sized.catch(() => undefined);
    // A failure reaches the consumer through its pipeline; one that comes before the consumer
    // attached must not bring the process down as an unhandled "error" event.
    this.on("error", () => undefined);
    stream.on("data", (message: ReadFileResponse) => {
      if (this.#expected === undefined) {
        this.#expected = Number(message.sizeBytes);
        // Nothing more until the consumer reads.
        stream.pause();
        sized.resolve(this.#expected);
        return;
      }
      this.#received += message.chunk.length;
      if (!this.push(message.chunk)) stream.pause();
    });
    stream.on("error", (error: ServiceError) => {
      this.#over = true;
      // Cancelled by this side: destroyed already, with the reason.
      if (this.destroyed) return;
      const failure = fsCallError(toRpcError(error), session, false);
      sized.reject(failure);
      this.destroy(failure);
    });
    // "end", not "status": it comes once every message the agent sent was taken from the stream.
    // After a failure it may come too, once the failure destroyed this already.
    stream.on("end", () => {
      this.#over = true;
      if (this.destroyed) return;
      if (this.#expected === undefined) {
        const failure = this.#failure("the host agent ended the read without an answer");
        sized.reject(failure);
        this.destroy(failure);
      } else if (this.#received !== this.#expected) {
        this.destroy(this.#failure(`the host agent sent ${this.#received} of ${this.#expected} bytes`));
      } else {
        this.push(null);
      }
    });
  }

  #failure(message: string): ApiError {
    return fsCallError(new RpcError(Code.INTERNAL, message), this.#session, false);
  }

  override _read(): void {
    this.#stream.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.#over) this.#stream.cancel();
    this.#over = true;
    callback(error);
  }
}

/**
 * Opens a file of the session's host for reading: resolves once the agent opened it and said its
 * size (within AGENT_TIMEOUT_MS), with its bytes still to come. `signal` (the client went away)
 * cancels the read at any point.
 */
export async function readFile(
  deps: BrowserDeps,
  principal: Principal,
  idOrName: string,
  query: PathQuery,
  requestId: string,
  signal: AbortSignal,
): Promise<FileDownload> {
  const session = await useSession(deps.store, principal, idOrName);
  const stream: ReadStream = deps.hosts.client(session.hostAddress).readFile({ requestId });
  const contents = new AgentFileContents(stream, session);
  const cancel = () => contents.destroy();
  signal.addEventListener("abort", cancel, { once: true });
  contents.once("close", () => signal.removeEventListener("abort", cancel));
  stream.write({ sessionId: session.id, path: query.path });
  stream.end();
  const timer = setTimeout(
    () => contents.destroy(fsCallError(new RpcError(Code.DEADLINE_EXCEEDED, "no answer"), session, false)),
    deps.agentTimeoutMs,
  );
  try {
    const sizeBytes = await Promise.race([
      contents.sized,
      new Promise<never>((_, reject) => contents.once("close", () => reject(contents.errored ?? clientGone()))),
    ]);
    return { sizeBytes, contents };
  } finally {
    clearTimeout(timer);
  }
}

function clientGone(): ApiError {
  return new ApiError("invalid_request", "the client went away");
}
