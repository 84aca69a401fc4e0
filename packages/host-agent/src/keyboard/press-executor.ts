import { setTimeout as sleep } from "node:timers/promises";
import type { InputStep } from "./press-plan.ts";
import { type BoundRow, consecutiveRuns, type SpareBindings } from "./spare-bindings.ts";
import type { X11Connection } from "./x11-client.ts";

/**
 * How long a spare keycode keeps a temporary keysym after it was bound. Chromium translates a key press with
 * the map it fetched when it dispatched the MappingNotify before it, which it may do well after the server
 * sent it (it fell behind rendering what was typed); rebinding or restoring the keycode before that fetch
 * makes it read something else. xdotool leaves 12 ms (its default delay). Measured here: text with more
 * distinct characters without a key than one batch holds came out wrong with 50 ms (Chromium was over 100 ms
 * behind while laying out its first CJK glyphs). Bindings outlive calls and are restored when input is idle,
 * so the wait falls only on text that needs more than one batch.
 */
export const SETTLE_MS = 300;

/** After binding keycodes, before pressing them: time for Chromium to fetch the new map. */
export const BIND_WAIT_MS = 100;

/** Waits until `until` (performance.now() time), ending early when the signal aborts or the X server goes away. */
export async function waitUntil(connection: X11Connection, until: number, signal?: AbortSignal): Promise<void> {
  const signals = signal ? [signal, connection.lostSignal] : [connection.lostSignal];
  // Timers may fire a little early, and a duration is a minimum the caller relies on.
  for (let left = until - performance.now(); left > 0; left = until - performance.now()) {
    try {
      await sleep(left, undefined, { signal: AbortSignal.any(signals) });
    } catch (error) {
      throw connection.lost ?? error;
    }
  }
}

/** Sends the rows to their keycodes, one request per run of consecutive keycodes. */
export function sendRows(connection: X11Connection, rows: ReadonlyMap<number, readonly number[]>, width: number): void {
  for (const run of consecutiveRuns(rows.keys())) {
    connection.changeKeyboardMapping(
      run[0] as number,
      width,
      run.flatMap((keycode) => rows.get(keycode) ?? []),
    );
  }
}

/**
 * Sends the steps over one connection without a round trip per event, then one round trip to confirm. Whatever
 * happens, keys this call still holds are released, and so are its buttons unless it ended as planned (a
 * click_type "down" leaves its button down on purpose). Spare keycode bindings are recorded in `bindings` and
 * left in place: the keyboard restores them later.
 */
export async function executeSteps(
  connection: X11Connection,
  steps: readonly InputStep[],
  bindings: SpareBindings,
  signal: AbortSignal,
): Promise<void> {
  const down: number[] = [];
  const buttons: number[] = [];
  let completed = false;
  try {
    for (let index = 0; index < steps.length; index++) {
      const step = steps[index] as InputStep;
      switch (step.kind) {
        case "down":
          connection.fakeKey(true, step.keycode);
          down.push(step.keycode);
          break;
        case "up":
          connection.fakeKey(false, step.keycode);
          down.splice(down.lastIndexOf(step.keycode), 1);
          break;
        case "bind": {
          // Consecutive binds go out together: one MappingNotify, one map fetch for every client.
          const rows = new Map<number, BoundRow>([[step.keycode, step.row]]);
          for (let next = steps[index + 1]; next?.kind === "bind"; next = steps[index + 1]) {
            rows.set(next.keycode, next.row);
            index++;
          }
          await waitUntil(connection, bindings.settledAt(rows.keys(), SETTLE_MS), signal);
          sendRows(connection, rows, 2);
          const boundAt = performance.now();
          for (const [keycode, row] of rows) bindings.set(keycode, { row, boundAt });
          // Chromium fetches the new map asynchronously and translates a press that arrives before the answer
          // with the map it had: an empty keycode would type nothing, a rebound one its previous character.
          await waitUntil(connection, boundAt + BIND_WAIT_MS, signal);
          break;
        }
        case "hold":
          // Confirmed first, so the keys are down for the whole duration by the server's clock.
          await connection.sync();
          await waitUntil(connection, performance.now() + step.ms, signal);
          break;
        case "wait":
          await waitUntil(connection, performance.now() + step.ms, signal);
          break;
        case "motion":
          connection.fakeMotion(step.x, step.y);
          break;
        case "button-down":
          connection.fakeButton(true, step.button);
          buttons.push(step.button);
          break;
        case "button-up":
          connection.fakeButton(false, step.button);
          if (buttons.includes(step.button)) buttons.splice(buttons.lastIndexOf(step.button), 1);
          break;
      }
    }
    completed = true;
  } finally {
    if (!connection.lost) {
      if (!completed) for (const button of buttons.reverse()) connection.fakeButton(false, button);
      for (const keycode of down.reverse()) connection.fakeKey(false, keycode);
    }
  }
  await connection.sync();
}
