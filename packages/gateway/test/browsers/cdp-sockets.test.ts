import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import type { CdpConnection } from "../../src/browsers/cdp/connection.ts";
import { CdpSockets } from "../../src/browsers/cdp/sockets.ts";
import type { BrowserSessionRecord } from "../../src/store/browser-sessions.ts";
import type { Store } from "../../src/store/store.ts";

const session = { id: "s1", organizationId: "org-a" } as BrowserSessionRecord;

/** A connection that records how it was closed. */
function connection(): CdpConnection & { closedWith: unknown[] } {
  const closedWith: unknown[] = [];
  return {
    session,
    closedWith,
    start: () => undefined,
    ping: () => undefined,
    close: (...args: unknown[]) => closedWith.push(args),
  } as never;
}

describe("the CDP sockets of a replica", () => {
  it("close a session's sockets with its end reason when CDP activity finds it ended", async () => {
    const touch = vi.fn().mockResolvedValue(false);
    const find = vi.fn().mockResolvedValue({ ...session, endReason: "deleted" });
    const store = { browserSessions: { touch, find } } as unknown as Store;
    const sockets = new CdpSockets({ store, logger: pino({ level: "silent" }), pingIntervalMs: 60_000 });
    const open = connection();
    sockets.add(open);
    sockets.activity(session);
    await vi.waitFor(() => expect(open.closedWith).toEqual([["session_ended", "browser session s1 ended: deleted"]]));
    expect(find).toHaveBeenCalledWith("org-a", "s1", true);
    sockets.close();
  });

  it("write a session's activity at most once a second", async () => {
    const touch = vi.fn().mockResolvedValue(true);
    const store = { browserSessions: { touch } } as unknown as Store;
    const sockets = new CdpSockets({ store, logger: pino({ level: "silent" }), pingIntervalMs: 60_000 });
    sockets.activity(session);
    sockets.activity(session);
    expect(touch).toHaveBeenCalledTimes(1);
    sockets.close();
  });
});
