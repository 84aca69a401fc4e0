import pino from "pino";
import { describe, expect, it } from "vitest";
import { BrowserSlot, SessionNotRunningError, SlotBusyError } from "../../src/session/slot.ts";

/** A slot on a host without a browser or display: the session bookkeeping alone. */
function slot(): BrowserSlot {
  return new BrowserSlot({
    spare: undefined,
    relay: undefined,
    display: undefined,
    keyboard: undefined,
    logger: pino({ level: "silent" }),
    onFenceFailure: (error) => {
      throw error;
    },
  });
}

describe("the browser slot", () => {
  it("runs one session at a time and answers a repeated start the same", async () => {
    const s = slot();
    const first = await s.start("a");
    expect(first).toMatchObject({ cdpWsUrl: "", headless: true, agentInstance: s.instance });
    expect(await s.start("a")).toEqual(first);
    await expect(s.start("b")).rejects.toBeInstanceOf(SlotBusyError);
    expect(s.currentSessionId).toBe("a");
    expect(() => s.require("a")).not.toThrow();
    expect(() => s.require("b")).toThrow(SessionNotRunningError);
  });

  it("refuses every call of a stopped session, and never starts it again", async () => {
    const s = slot();
    await s.start("a");
    expect(await s.stop("a")).toBe(true);
    expect(() => s.require("a")).toThrow(/not running on this host: stopped/);
    await expect(s.start("a")).rejects.toBeInstanceOf(SessionNotRunningError);
    expect(await s.stop("a")).toBe(false);
    await expect(s.start("b")).resolves.toBeDefined();
  });

  it("refuses to start a session whose stop arrived first", async () => {
    const s = slot();
    expect(await s.stop("late")).toBe(false);
    await expect(s.start("late")).rejects.toThrow(/stopped before it started/);
    expect(s.currentSessionId).toBeUndefined();
  });

  it("tells a waiter when the session ends, and at once for one that is not running", async () => {
    const s = slot();
    await s.start("a");
    const waiting = s.waitEnd("a", new AbortController().signal);
    await s.stop("a", "deleted");
    expect(await waiting).toBe("deleted");
    expect(await s.waitEnd("a", new AbortController().signal)).toBe("deleted");
    expect(await s.waitEnd("never", new AbortController().signal)).toBe("not running on this host");
  });

  it("gives up waiting when the call is cancelled", async () => {
    const s = slot();
    await s.start("a");
    const cancel = new AbortController();
    const waiting = s.waitEnd("a", cancel.signal);
    cancel.abort(new Error("cancelled"));
    await expect(waiting).rejects.toThrow("cancelled");
    const already = new AbortController();
    already.abort(new Error("gone"));
    await expect(s.waitEnd("a", already.signal)).rejects.toThrow("gone");
  });

  it("ends the running session when the agent shuts down, and starts none after", async () => {
    const s = slot();
    await s.start("a");
    await s.shutdown();
    expect(await s.waitEnd("a", new AbortController().signal)).toBe("the host agent shut down");
    await expect(s.start("b")).rejects.toThrow(/shutting down/);
  });
});

describe("DevTools attachments", () => {
  it("are refused for a session that is not running, and on a host without a browser", async () => {
    const s = slot();
    expect(() => s.attach("a", () => undefined)).toThrow(SessionNotRunningError);
    await s.start("a");
    expect(() => s.attach("a", () => undefined)).toThrow(/this host runs no browser/);
  });
});
