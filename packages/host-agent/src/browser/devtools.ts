import { MAX_CDP_MESSAGE_BYTES } from "@browser-infra/contract";
import WebSocket from "ws";

/**
 * Opens one DevTools connection to a browser this agent launched (its loopback URL). Resolves
 * once the socket is open; rejects when it cannot be opened or when signal aborts first.
 */
export function connectDevtools(cdpWsUrl: string, signal: AbortSignal): Promise<WebSocket> {
  // An abort listener added after the abort would never run, and the socket would outlive the call.
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    // Compression would cost CPU on both ends of a loopback connection and save nothing; the UTF-8
    // check would read every byte of every screenshot from our own Chromium, which sends only JSON
    // (a client's messages are checked at the gateway).
    const socket = new WebSocket(cdpWsUrl, {
      perMessageDeflate: false,
      maxPayload: MAX_CDP_MESSAGE_BYTES,
      skipUTF8Validation: true,
    });
    const onAbort = () => {
      socket.terminate();
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    socket.once("open", () => {
      signal.removeEventListener("abort", onAbort);
      resolve(socket);
    });
    socket.once("error", (error) => {
      signal.removeEventListener("abort", onAbort);
      reject(error);
    });
  });
}
