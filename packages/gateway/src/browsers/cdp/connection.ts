import type { CdpRequestSchema, CdpResponse, ClientBidiStream } from "@browser-infra/contract";
import { Code } from "@browser-infra/contract";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceError, StatusObject } from "@grpc/grpc-js";
import type WebSocket from "ws";
import type { BrowserSessionRecord } from "../../store/browser-sessions.ts";
import { cdpMetrics } from "./cdp-metrics.ts";
import { CLOSE_REASONS, type CloseReason, closeText } from "./close-reasons.ts";

/** The gRPC stream to the session's agent that carries one DevTools connection. */
export type CdpStream = ClientBidiStream<MessageInitShape<typeof CdpRequestSchema>, CdpResponse>;

/**
 * Past this many bytes waiting to be written to the client, the agent's stream is paused (HTTP/2
 * flow control then holds the browser's side back) until the client has read half of it.
 */
const HIGH_WATER_BYTES = 4 * 1024 * 1024;
/**
 * The bound of what may wait for the client: only a message arriving on top of a queue this long
 * (messages in flight when the stream was paused, or huge ones) gets past back-pressure, and then
 * the client is too slow and is cut off.
 */
export const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

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
  #answeredPing = true;
  #clientPaused = false;

  /** stream is paused and has answered "connected"; ws is the upgraded client socket. */
  constructor(ws: WebSocket, stream: CdpStream, session: BrowserSessionRecord, owner: ConnectionOwner) {
    this.session = session;
    this.#ws = ws;
    this.#stream = stream;
    this.#owner = owner;

    ws.on("message", (data: Buffer) => this.#toBrowser(data));
    ws.on("pong", () => {
      this.#answeredPing = true;
    });
    ws.on("error", () => this.close("protocol_error"));
    ws.on("close", () => this.close("client_closed"));

    stream.on("data", (response: CdpResponse) => this.#toClient(response.message));
    stream.on("error", (error: ServiceError) =>
      error.code === Code.ABORTED
        ? this.close("session_ended", error.details)
        : this.close("host_unavailable", `the browser's host is unreachable (${Code[error.code] ?? error.code})`),
    );
    stream.on("status", (status: StatusObject) => {
      if (status.code === Code.OK) this.close("browser_closed");
    });
    stream.resume();
  }

  #toBrowser(data: Buffer): void {
    if (this.#closed) return;
    cdpMetrics.toBrowser(data.length);
    this.#owner.activity(this.session);
    if (this.#stream.write({ message: data }) || this.#clientPaused) return;
    this.#clientPaused = true;
    this.#ws.pause();
    this.#stream.once("drain", () => {
      this.#clientPaused = false;
      if (!this.#closed) this.#ws.resume();
    });
  }

  #toClient(message: Uint8Array): void {
    if (this.#closed) return;
    if (this.#ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      this.close("slow_client");
      return;
    }
    cdpMetrics.toClient(message.length);
    this.#owner.activity(this.session);
    this.#ws.send(message, { binary: false }, this.#afterSend);
    if (this.#ws.bufferedAmount > HIGH_WATER_BYTES) this.#stream.pause();
  }

  readonly #afterSend = (): void => {
    if (!this.#closed && this.#stream.isPaused() && this.#ws.bufferedAmount <= HIGH_WATER_BYTES / 2) {
      this.#stream.resume();
    }
  };

  /** Called by the ping loop: a socket that did not answer the previous ping is cut off. */
  ping(): void {
    if (this.#closed) return;
    if (!this.#answeredPing) {
      this.close("ping_timeout");
      return;
    }
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
