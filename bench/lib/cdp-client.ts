import WebSocket from "ws";

/** CDP's reply to one command: the raw message as received, and its length in bytes. */
interface Pending {
  resolve(message: Buffer): void;
  reject(error: Error): void;
}

const OPEN_TIMEOUT_MS = 30_000;
/** A reply's id is in its first bytes: Chromium writes {"id":N,… first, and the gateway carries messages as they are. */
const ID_PREFIX = /^\{"id":(\d+)[,}]/;

/**
 * A minimal DevTools client over the `ws` package (what Playwright and Puppeteer use), the same for
 * every leg a benchmark compares: one socket, commands matched to replies by id, events dropped.
 * Replies are matched on the id at their start, so a large reply (a screenshot) is never parsed
 * unless the caller asks for it.
 */
export class CdpClient {
  readonly url: string;
  /** Bytes of every message received so far, replies and events. */
  bytesReceived = 0;
  readonly #socket: WebSocket;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  #closed: Error | undefined;

  private constructor(url: string, socket: WebSocket) {
    this.url = url;
    this.#socket = socket;
    socket.on("message", (data: Buffer) => this.#received(data));
    socket.on("close", (code, reason) => this.#fail(new Error(`CDP socket closed (${code} ${reason.toString()})`)));
    socket.on("error", (error) => this.#fail(new Error(`CDP socket failed: ${error.message}`)));
  }

  static open(url: string): Promise<CdpClient> {
    const socket = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.terminate();
        reject(new Error(`CDP socket to ${redacted(url)} did not open in ${OPEN_TIMEOUT_MS} ms`));
      }, OPEN_TIMEOUT_MS);
      socket.once("open", () => {
        clearTimeout(timer);
        socket.removeAllListeners("error");
        resolve(new CdpClient(url, socket));
      });
      socket.once("error", (error) => {
        clearTimeout(timer);
        reject(new Error(`CDP socket to ${redacted(url)} failed: ${error.message}`));
      });
    });
  }

  /** Sends a command and resolves with its reply exactly as received (rejects when the socket ends first). */
  sendRaw(method: string, params: object = {}, sessionId?: string): Promise<Buffer> {
    if (this.#closed) return Promise.reject(this.#closed);
    const id = ++this.#nextId;
    const promise = new Promise<Buffer>((resolve, reject) => this.#pending.set(id, { resolve, reject }));
    this.#socket.send(
      JSON.stringify(sessionId === undefined ? { id, method, params } : { id, method, params, sessionId }),
    );
    return promise;
  }

  /** Sends a command and resolves with its parsed result; rejects with CDP's error. */
  async send<T = Record<string, unknown>>(method: string, params: object = {}, sessionId?: string): Promise<T> {
    const reply = JSON.parse((await this.sendRaw(method, params, sessionId)).toString("utf8")) as {
      result?: T;
      error?: { message?: string };
    };
    if (reply.error || reply.result === undefined) {
      throw new Error(`${method} failed: ${reply.error?.message ?? JSON.stringify(reply)}`);
    }
    return reply.result;
  }

  /** Closes the socket and waits until it is closed. */
  async close(): Promise<void> {
    if (this.#socket.readyState === WebSocket.CLOSED) return;
    const closed = new Promise<void>((resolve) => this.#socket.once("close", () => resolve()));
    this.#socket.close();
    const timer = setTimeout(() => this.#socket.terminate(), 5_000);
    await closed;
    clearTimeout(timer);
  }

  #received(data: Buffer): void {
    this.bytesReceived += data.length;
    const match = ID_PREFIX.exec(data.subarray(0, 32).toString("latin1"));
    if (!match) return;
    const id = Number(match[1]);
    const pending = this.#pending.get(id);
    if (!pending) return;
    this.#pending.delete(id);
    pending.resolve(data);
  }

  #fail(error: Error): void {
    this.#closed ??= error;
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
  }
}

/** The URL without its query string: the gateway's CDP token is a credential. */
export function redacted(url: string): string {
  return url.split("?")[0] ?? url;
}
