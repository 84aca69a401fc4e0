/**
 * What a pump needs of a WebSocket (ws's WebSocket has it): how much waits to be written, sending
 * with a callback once written, and pausing its reading.
 */
export interface CdpSocket {
  readonly bufferedAmount: number;
  send(data: Uint8Array, options: { binary: boolean }, written?: (error?: Error) => void): void;
  pause(): void;
  resume(): void;
}

/** What a pump needs of a gRPC stream of CDP messages (grpc-js's duplex streams have it, either side). */
export interface CdpMessageStream {
  write(message: { message: Uint8Array }): boolean;
  pause(): void;
  resume(): void;
  once(event: "drain", listener: () => void): unknown;
}

/**
 * Past this many bytes waiting to be written on the socket, the stream is paused (HTTP/2 flow
 * control then holds the other end back) until the socket has written it all. What waits on a
 * socket is therefore at most this plus one message.
 */
export const CDP_HIGH_WATER_BYTES = 4 * 1024 * 1024;

/**
 * Carries CDP messages between a WebSocket and a gRPC stream, each side paused while the other
 * cannot keep up: the gateway pumps between a client and its agent, the agent between the gateway
 * and its Chromium. Whoever owns both ends feeds it what they read and says when it is over.
 */
export class CdpPump {
  readonly #socket: CdpSocket;
  readonly #stream: CdpMessageStream;
  readonly #over: () => boolean;
  #socketPaused = false;
  /** Counts the stream's holds; the current one's number while the stream is held back. */
  #holds = 0;
  #heldBack: number | undefined;

  /** over: true once the connection ended, after which nothing is resumed. */
  constructor(socket: CdpSocket, stream: CdpMessageStream, over: () => boolean) {
    this.#socket = socket;
    this.#stream = stream;
    this.#over = over;
  }

  /** The number of the stream's current hold by a socket that has not written its queue; undefined when not held. */
  get heldBack(): number | undefined {
    return this.#heldBack;
  }

  /** A message read from the socket: onto the stream, the socket paused while the stream is full. */
  toStream(message: Uint8Array): void {
    if (this.#stream.write({ message }) || this.#socketPaused) return;
    this.#socketPaused = true;
    this.#socket.pause();
    this.#stream.once("drain", () => {
      this.#socketPaused = false;
      if (!this.#over()) this.#socket.resume();
    });
  }

  /** A message read from the stream: onto the socket, the stream paused while the socket's queue is long. */
  toSocket(message: Uint8Array): void {
    // Only the message that fills the queue past the mark asks to hear when it is written: the
    // stream is paused behind it, so by then the socket has written everything.
    const fills = this.#socket.bufferedAmount + message.length > CDP_HIGH_WATER_BYTES;
    this.#socket.send(message, { binary: false }, fills ? this.#written : undefined);
    if (!fills) return;
    this.#heldBack = ++this.#holds;
    this.#stream.pause();
  }

  readonly #written = (): void => {
    if (this.#over() || this.#heldBack === undefined) return;
    this.#heldBack = undefined;
    this.#stream.resume();
  };
}
