import { setTimeout as sleep } from "node:timers/promises";
import { X11Connection } from "../keyboard/x11-client.ts";

const POLL_MS = 25;

/**
 * Gives the X keyboard focus to the top-level window of process `pid` and resolves once the X
 * server reports that window focused. Without a window manager nothing else does this reliably:
 * Chromium takes the focus a moment after its window is mapped, and keys pressed before that go
 * to the root window. Its own X connection, closed at the end, so it never touches the keyboard's.
 */
export async function focusWindowOf(display: string, pid: number, timeoutMs: number): Promise<number> {
  const connection = await X11Connection.open(display);
  try {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const window = await viewableWindowOf(connection, pid);
      if (window !== undefined) {
        if ((await connection.getInputFocus()) === window) return window;
        connection.setInputFocus(window);
        await connection.sync();
      }
      if (performance.now() > deadline) {
        throw new Error(
          window === undefined
            ? `no window of process ${pid} was mapped on ${display} within ${timeoutMs} ms`
            : `window ${window} of process ${pid} did not keep the focus on ${display} within ${timeoutMs} ms`,
        );
      }
      await sleep(POLL_MS);
    }
  } finally {
    await connection.close();
  }
}

/** A mapped child of the root window whose _NET_WM_PID is `pid`. */
async function viewableWindowOf(connection: X11Connection, pid: number): Promise<number | undefined> {
  for (const window of await connection.children(connection.root)) {
    try {
      if ((await connection.cardinalProperty(window, "_NET_WM_PID")) !== pid) continue;
      if (await connection.viewable(window)) return window;
    } catch {
      // The window went away between the listing and the question.
    }
  }
  return undefined;
}
