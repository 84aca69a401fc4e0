import { EventEmitter } from "node:events";
import { Code, CDP_HIGH_WATER_BYTES as HIGH_WATER_BYTES } from "@browser-infra/contract";
import { describe, expect, it } from "vitest";
import type WebSocket from "ws";
import type { CloseReason } from "../../src/browsers/cdp/close-reasons.ts";
import { CdpConnection, type CdpStream } from "../../src/browsers/cdp/connection.ts";
import type { BrowserSessionRecord } from "../../src/store/browser-sessions.ts";

const MiB = 1024 * 1024;

/** The client's socket: what was sent, and how much ws says still waits to be written. */
class FakeSocket extends EventEmitter {
  bufferedAmount = 0;
  paused = false;
  sent: { bytes: number; done: (() => void) | undefined }[] = [];
  closedWith: { code: number; reason: string } | "terminated" | undefined;
  pings = 0;
  send(message: Uint8Array, _options: unknown, done?: () => void): void {
    this.bufferedAmount += message.length;
    this.sent.push({ bytes: message.length, done });
  }
  /** The socket wrote out everything sent so far. */
  drain(): void {
    this.bufferedAmount = 0;
    for (const { done } of this.sent.splice(0)) done?.();
  }
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
  }
  ping(): void {
    this.pings++;
  }
  close(code: number, reason: string): void {
    this.closedWith = { code, reason };
  }
  terminate(): void {
    this.closedWith = "terminated";
  }
}

/** The agent's stream: what was written, and whether it is paused. */
class FakeStream extends EventEmitter {
  written: Uint8Array[] = [];
  accepts = true;
  paused = true;
  cancelled = false;
  write(message: { message: Uint8Array }): boolean {
    this.written.push(message.message);
    return this.accepts;
  }
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
  }
  isPaused(): boolean {
    return this.paused;
  }
  cancel(): void {
    this.cancelled = true;
  }
}

function bridge(failedEarly?: { code: number; details: string }) {
  const socket = new FakeSocket();
  const stream = new FakeStream();
  const removed: CloseReason[] = [];
  let activity = 0;
  const connection = new CdpConnection(
    socket as unknown as WebSocket,
    stream as unknown as CdpStream,
    { id: "s1" } as BrowserSessionRecord,
    {
      activity: () => {
        activity++;
      },
      removed: (_connection, reason) => removed.push(reason),
    },
    failedEarly as never,
  );
  connection.start();
  const fromBrowser = (bytes: number) => stream.emit("data", { connected: false, message: new Uint8Array(bytes) });
  return { connection, socket, stream, removed, fromBrowser, activity: () => activity };
}

describe("a CDP connection through the gateway", () => {
  it("carries messages both ways and reports them as activity, at most once a second", () => {
    const { socket, stream, fromBrowser, activity } = bridge();
    expect(stream.paused).toBe(false);
    socket.emit("message", Buffer.from('{"id":1,"method":"Browser.getVersion"}'));
    expect(Buffer.from(stream.written[0] as Uint8Array).toString()).toBe('{"id":1,"method":"Browser.getVersion"}');
    fromBrowser(100);
    expect(socket.sent.map((s) => s.bytes)).toEqual([100]);
    expect(activity()).toBe(1);
  });

  it("pauses the browser's side while the client is slow to read, and resumes it once the client caught up", () => {
    const { socket, stream, fromBrowser, removed } = bridge();
    fromBrowser(3 * MiB);
    expect(stream.paused).toBe(false);
    fromBrowser(2 * MiB);
    expect(stream.paused).toBe(true);
    socket.drain();
    expect(stream.paused).toBe(false);
    expect(removed).toEqual([]);
  });

  it("cuts off a client that leaves more than the high-water mark unread from one ping to the next", () => {
    const { connection, socket, stream, fromBrowser, removed } = bridge();
    fromBrowser(HIGH_WATER_BYTES + 1);
    expect(stream.paused).toBe(true);
    connection.ping();
    socket.emit("pong");
    expect(socket.closedWith).toBeUndefined();
    connection.ping();
    expect(socket.closedWith).toEqual({ code: 1008, reason: expect.stringContaining("client too slow") });
    expect(stream.cancelled).toBe(true);
    expect(removed).toEqual(["slow_client"]);
  });

  it("keeps a client that catches up between two pings", () => {
    const { connection, socket, fromBrowser, removed } = bridge();
    fromBrowser(HIGH_WATER_BYTES + 1);
    connection.ping();
    socket.emit("pong");
    socket.drain();
    connection.ping();
    socket.emit("pong");
    connection.ping();
    expect(socket.closedWith).toBeUndefined();
    expect(removed).toEqual([]);
  });

  it("pauses the client's socket while the agent's stream is full, until it drains", () => {
    const { socket, stream } = bridge();
    stream.accepts = false;
    socket.emit("message", Buffer.from("{}"));
    socket.emit("message", Buffer.from("{}"));
    expect(socket.paused).toBe(true);
    stream.accepts = true;
    stream.emit("drain");
    expect(socket.paused).toBe(false);
    expect(stream.listenerCount("drain")).toBe(0);
  });

  it("is cut off when it did not answer the previous ping", () => {
    const { connection, socket, removed } = bridge();
    connection.ping();
    socket.emit("pong");
    connection.ping();
    expect(socket.pings).toBe(2);
    expect(socket.closedWith).toBeUndefined();
    connection.ping();
    expect(socket.closedWith).toBe("terminated");
    expect(removed).toEqual(["ping_timeout"]);
  });

  it("closes with 1001 and the agent's words when the session ended, once", () => {
    const { socket, stream, removed } = bridge();
    stream.emit("error", { code: Code.ABORTED, details: "browser session s1 ended: stopped" });
    socket.emit("close");
    expect(socket.closedWith).toEqual({ code: 1001, reason: "browser session s1 ended: stopped" });
    expect(removed).toEqual(["session_ended"]);
  });

  it("closes with 1011 when the host cannot be reached, and 1000 when Chromium closed the connection", () => {
    const unreachable = bridge();
    unreachable.stream.emit("error", { code: Code.UNAVAILABLE, details: "connect ECONNREFUSED" });
    expect(unreachable.socket.closedWith).toMatchObject({ code: 1011 });
    const closedByBrowser = bridge();
    closedByBrowser.stream.emit("end");
    expect(closedByBrowser.socket.closedWith).toMatchObject({ code: 1000 });
    expect([...unreachable.removed, ...closedByBrowser.removed]).toEqual(["host_unavailable", "browser_closed"]);
  });

  it("closes at once when the agent's stream failed before the connection listened", () => {
    const { socket, stream, removed } = bridge({ code: Code.ABORTED, details: "browser session s1 ended: deleted" });
    expect(socket.closedWith).toEqual({ code: 1001, reason: "browser session s1 ended: deleted" });
    expect(stream.paused).toBe(true);
    expect(removed).toEqual(["session_ended"]);
  });
});
