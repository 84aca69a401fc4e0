import type WebSocket from "ws";
import { connectDevtools } from "../browser/devtools.ts";

interface CdpReply {
  id?: number;
  result?: Record<string, unknown>;
  error?: { message?: string };
}

/** One command at a time on a DevTools socket this module opened; rejects on CDP's error or the socket's end. */
function send<T>(socket: WebSocket, id: number, method: string, params: object, sessionId?: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (data: Buffer) => {
      const reply = JSON.parse(data.toString("utf8")) as CdpReply;
      if (reply.id !== id) return;
      settle();
      if (reply.error || !reply.result) reject(new Error(`${method}: ${reply.error?.message ?? "no result"}`));
      else resolve(reply.result as T);
    };
    const onClose = () => {
      settle();
      reject(new Error(`the browser's DevTools socket closed during ${method}`));
    };
    const settle = () => {
      socket.off("message", onMessage);
      socket.off("close", onClose);
    };
    socket.on("message", onMessage);
    socket.once("close", onClose);
    socket.send(JSON.stringify(sessionId === undefined ? { id, method, params } : { id, method, params, sessionId }));
  });
}

/**
 * A PNG of what a headless browser shows: its first page target's viewport, through
 * Page.captureScreenshot on a DevTools connection of its own, closed afterwards. Rejects when
 * signal aborts first (the socket is closed then too).
 */
export async function captureViaCdp(cdpWsUrl: string, signal: AbortSignal): Promise<Buffer> {
  const socket = await connectDevtools(cdpWsUrl, signal);
  const onAbort = () => socket.terminate();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    const { targetInfos } = await send<{ targetInfos: { targetId: string; type: string }[] }>(
      socket,
      1,
      "Target.getTargets",
      {},
    );
    const page = targetInfos.find((target) => target.type === "page");
    if (!page) throw new Error("the browser has no page to capture");
    const { sessionId } = await send<{ sessionId: string }>(socket, 2, "Target.attachToTarget", {
      targetId: page.targetId,
      flatten: true,
    });
    const { data } = await send<{ data: string }>(
      socket,
      3,
      "Page.captureScreenshot",
      { format: "png", optimizeForSpeed: true },
      sessionId,
    );
    return Buffer.from(data, "base64");
  } catch (error) {
    signal.throwIfAborted();
    throw error;
  } finally {
    signal.removeEventListener("abort", onAbort);
    socket.terminate();
  }
}
