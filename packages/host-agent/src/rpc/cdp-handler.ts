import {
  type CallContext,
  CdpPump,
  type CdpRequest,
  type CdpResponseSchema,
  Code,
  RpcError,
  type ServerBidiStream,
} from "@browser-infra/contract";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type WebSocket from "ws";
import { connectDevtools } from "../browser/devtools.ts";
import type { BrowserSlot } from "../session/slot.ts";
import { slotRpcError } from "./session-handlers.ts";

type CdpStream = ServerBidiStream<CdpRequest, MessageInitShape<typeof CdpResponseSchema>>;

/** The caller's first message (the session to attach to); the stream is left paused after it. */
function firstMessage(stream: CdpStream, signal: AbortSignal): Promise<CdpRequest> {
  return new Promise((resolve, reject) => {
    const settle = (outcome: () => void) => {
      stream.off("data", onData);
      stream.off("end", onEnd);
      signal.removeEventListener("abort", onAbort);
      outcome();
    };
    const onData = (request: CdpRequest) => {
      // Nothing more is read until the bridge listens: a message emitted to no listener is lost.
      stream.pause();
      settle(() => resolve(request));
    };
    const onEnd = () =>
      settle(() => reject(new RpcError(Code.INVALID_ARGUMENT, "the stream ended before naming a session")));
    const onAbort = () => settle(() => reject(signal.reason));
    stream.on("data", onData);
    stream.once("end", onEnd);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Carries CDP messages both ways (each side paused while the other cannot keep up: see CdpPump)
 * until one side ends: the caller half-closes or cancels, Chromium
 * closes its socket, or stop aborts (the session was fenced). Rejects with stop's reason or with
 * UNAVAILABLE when the socket fails; resolves otherwise.
 */
function bridge(stream: CdpStream, socket: WebSocket, stop: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    let done = false;
    const pump = new CdpPump(socket, stream, () => done);
    const finish = (error?: unknown) => {
      if (done) return;
      done = true;
      stream.off("data", onRequest);
      stream.off("end", onEnd);
      stop.removeEventListener("abort", onStop);
      socket.terminate();
      if (error) reject(error);
      else resolve();
    };
    const onRequest = (request: CdpRequest) => pump.toSocket(request.message);
    const onEnd = () => finish();
    const onStop = () => finish(stop.reason);
    socket.on("message", (data: Buffer) => {
      if (!done) pump.toStream(data);
    });
    socket.on("close", () => finish());
    socket.on("error", (error) =>
      finish(new RpcError(Code.UNAVAILABLE, `the browser's DevTools connection failed: ${error.message}`)),
    );
    stream.on("data", onRequest);
    stream.once("end", onEnd);
    // Aborted while the socket opened (the caller cancelled, the session was fenced): a listener
    // added now would never run.
    if (stop.aborted) {
      finish(stop.reason);
      return;
    }
    stop.addEventListener("abort", onStop, { once: true });
    stream.resume();
  });
}

/** Cdp: one DevTools connection to the session's browser, held by the slot so its fence ends it. */
export function cdpHandler(slot: BrowserSlot) {
  return async (stream: CdpStream, context: CallContext): Promise<void> => {
    const { sessionId } = await firstMessage(stream, context.signal);
    if (sessionId === "") throw new RpcError(Code.INVALID_ARGUMENT, "the first message must name the session");
    const ended = new AbortController();
    let attachment: ReturnType<BrowserSlot["attach"]>;
    try {
      attachment = slot.attach(sessionId, (reason) =>
        ended.abort(new RpcError(Code.ABORTED, `browser session ${sessionId} ended: ${reason}`)),
      );
    } catch (error) {
      throw slotRpcError(error);
    }
    try {
      const stop = AbortSignal.any([ended.signal, context.signal]);
      let socket: WebSocket;
      try {
        socket = await connectDevtools(attachment.cdpWsUrl, stop);
      } catch (error) {
        if (stop.aborted) throw stop.reason;
        throw new RpcError(
          Code.UNAVAILABLE,
          `the browser's DevTools socket could not be opened: ${(error as Error).message}`,
        );
      }
      stream.write({ connected: true });
      await bridge(stream, socket, stop);
    } finally {
      attachment.detach();
    }
  };
}
