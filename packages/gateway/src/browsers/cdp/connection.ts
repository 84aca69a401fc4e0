import type { CdpRequestSchema, CdpResponse, ClientBidiStream } from "@browser-infra/contract";
import { CdpPump, Code } from "@browser-infra/contract";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceError } from "@grpc/grpc-js";
import type WebSocket from "ws";
import type { BrowserSessionRecord } from "../../store/browser-sessions.ts";
import { cdpMetrics } from "./cdp-metrics.ts";
import { CLOSE_REASONS, type CloseReason, closeText } from "./close-reasons.ts";

/** The gRPC stream to the session's agent that carries one DevTools connection. */
export type CdpStream = ClientBidiStream<MessageInitShape<typeof CdpRequestSchema>, CdpResponse>;

/** The registry writes a session's activity at most once a second; nearer reports would be dropped there. */
const ACTIVITY_REPORT_MS = 1_000;

/** What a connection reports to the registry that owns it. */
export interface ConnectionOwner {
  /** A CDP message went through, one way or the other. */
  activity(session: BrowserSessionRecord): void;
  /** The connection closed, for this reason; called once. */
  removed(connection: CdpConnection, reason: CloseReason): void;
}

/**
 * One client's DevTools connection: its WebSocket bridged to a gRPC stream to the session's agent,
 * which holds its own DevTools connection to the session's Chromium. Each side is paused while the
 * other cannot keep up, so a slow client or browser costs bounded memory.
 */
export class CdpConnection {
  readonly session: BrowserSessionRecord;
  readonly #ws: WebSocket;
  readonly #stream: CdpStream;
  readonly #owner: ConnectionOwner;
  #closed = false;
  /** When this connection last reported activity: the owner hears of it at most once a second. */
  #reportedActivityAt = Number.NEGATIVE_INFINITY;
  #answeredPing = true;
  readonly #pump: CdpPump;
  /** The pump's hold of the agent's stream (the client not reading) that the previous ping saw. */
  #heldAtLastPing: number | undefined;

  readonly #failedEarly: ServiceError | undefined;

  /**
   * stream is paused and has answered "connected"; ws is the upgraded client socket. failedEarly:
   * the stream's failure if it came before this connection listened (see upgrade.ts). Nothing
   * flows until start().
   */
  constructor(
    ws: WebSocket,
    stream: CdpStream,
    session: BrowserSessionRecord,
    owner: ConnectionOwner,
    failedEarly?: ServiceError,
  ) {
    this.session = session;
    this.#ws = ws;
    this.#stream = stream;
    this.#owner = owner;
    this.#failedEarly = failedEarly;
    this.#pump = new CdpPump(ws, stream, () => this.#closed);
  }

  /** Called by the owner once it holds the connection, so that a close it reports finds it there. */
  start(): void {
    const ws = this.#ws;
    const stream = this.#stream;
    ws.on("message", (data: Buffer) => this.#toBrowser(data));
    ws.on("pong", () => {
      this.#answeredPing = true;
    });
    ws.on("error", () => this.close("protocol_error"));
    ws.on("close", () => this.close("client_closed"));

    stream.on("data", (response: CdpResponse) => this.#toClient(response.message));
    // A failed stream closes the client at once: the session ended, or its host is gone.
    stream.on("error", (error: ServiceError) => this.#failed(error));
    // "end" (not "status"): it comes once every message the agent sent was taken from the
    // stream, so a paused stream still delivers Chromium's last answers before the close.
    stream.on("end", () => this.close("browser_closed"));
    if (this.#failedEarly) this.#failed(this.#failedEarly);
    else stream.resume();
  }

  #failed(error: ServiceError): void {
    if (error.code === Code.ABORTED) this.close("session_ended", error.details);
    else this.close("host_unavailable", `the browser's host is unreachable (${Code[error.code] ?? error.code})`);
  }

  #toBrowser(data: Buffer): void {
    if (this.#closed) return;
    cdpMetrics.toBrowser(data.length);
    this.#activity();
    this.#pump.toStream(data);
  }

  #toClient(message: Uint8Array): void {
    if (this.#closed) return;
    cdpMetrics.toClient(message.length);
    this.#activity();
    this.#pump.toSocket(message);
  }

  #activity(): void {
    const now = performance.now();
    if (now - this.#reportedActivityAt < ACTIVITY_REPORT_MS) return;
    this.#reportedActivityAt = now;
    this.#owner.activity(this.session);
  }

  /**
   * Called by the ping loop. A socket that did not answer the previous ping is cut off, and so is
   * a client that left the agent's stream paused (more than CDP_HIGH_WATER_BYTES unread) from one
   * ping to the next: the queue is full for that long, and the browser's side is held back.
   */
  ping(): void {
    if (this.#closed) return;
    if (!this.#answeredPing) {
      this.close("ping_timeout");
      return;
    }
    const held = this.#pump.heldBack;
    if (held !== undefined && held === this.#heldAtLastPing) {
      this.close("slow_client");
      return;
    }
    this.#heldAtLastPing = held;
    this.#answeredPing = false;
    this.#ws.ping();
  }

  /** Ends both sides: the agent's stream is cancelled (it closes its DevTools connection). */
  close(reason: CloseReason, detail?: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stream.cancel();
    const how = CLOSE_REASONS[reason];
    if (how) this.#ws.close(how.code, closeText(reason, detail));
    else this.#ws.terminate();
    this.#owner.removed(this, reason);
  }
}
