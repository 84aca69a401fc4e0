import { setTimeout as sleep } from "node:timers/promises";
import type { KeyboardMap } from "./keyboard-map.ts";
import type { KeyStep } from "./press-plan.ts";
import type { X11Connection } from "./x11-client.ts";

/**
 * How long a spare keycode keeps a temporary keysym after it was bound. A client translates a keycode with the
 * map it fetches after MappingNotify; restoring the map before that fetch would make it read nothing. xdotool
 * leaves 12 ms (its default delay); this leaves more for a busy browser.
 */
export const SETTLE_MS = 50;

/**
 * Sends the steps over one connection without a round trip per event, then one round trip to confirm. Whatever
 * happens, keys still down are released and bound spare keycodes get their original keysyms back.
 */
export async function executePress(
  connection: X11Connection,
  map: KeyboardMap,
  steps: readonly KeyStep[],
  signal: AbortSignal,
): Promise<void> {
  const down: number[] = [];
  const bound = new Set<number>();
  let boundAt = 0;
  // A wait ends early when the press is interrupted or the X server goes away: nothing is left to wait for.
  const wait = async (ms: number, interruption?: AbortSignal) => {
    const signals = interruption ? [interruption, connection.lostSignal] : [connection.lostSignal];
    try {
      await sleep(ms, undefined, { signal: AbortSignal.any(signals) });
    } catch (error) {
      throw connection.lost ?? error;
    }
  };
  // Timers may fire a little early, and the duration is a minimum the caller relies on.
  const holdFor = async (ms: number, interruption: AbortSignal) => {
    const until = performance.now() + ms;
    for (let left = ms; left > 0; left = until - performance.now()) await wait(left, interruption);
  };
  const settle = async (interruption?: AbortSignal) => {
    const remaining = boundAt + SETTLE_MS - performance.now();
    if (remaining > 0) await wait(remaining, interruption);
  };

  try {
    for (const step of steps) {
      switch (step.kind) {
        case "down":
          connection.fakeKey(true, step.keycode);
          down.push(step.keycode);
          break;
        case "up":
          connection.fakeKey(false, step.keycode);
          down.splice(down.lastIndexOf(step.keycode), 1);
          break;
        case "bind":
          // Both levels, so the keysym types the same with Shift held.
          connection.changeKeyboardMapping(step.keycode, 2, [step.keysym, step.keysym]);
          bound.add(step.keycode);
          boundAt = performance.now();
          break;
        case "settle":
          await settle(signal);
          break;
        case "hold":
          // Confirmed first, so the keys are down for the whole duration by the server's clock.
          await connection.sync();
          await holdFor(step.ms, signal);
          break;
      }
    }
  } finally {
    if (!connection.lost) {
      for (const keycode of down.reverse()) connection.fakeKey(false, keycode);
      if (bound.size > 0) {
        await settle();
        for (const keycode of bound) {
          connection.changeKeyboardMapping(keycode, map.keysymsPerKeycode, map.rowOf(keycode));
        }
      }
    }
  }
  await connection.sync();
}
