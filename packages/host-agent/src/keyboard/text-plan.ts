import type { KeyboardMap } from "./keyboard-map.ts";
import { type InputStep, NoSpareKeycodeError, Planner } from "./press-plan.ts";
import type { BoundRow, SpareBindings } from "./spare-bindings.ts";

export interface TextKeysyms {
  /** One keysym per character to type, in order. */
  keysyms: readonly number[];
  /** Wait between two characters; 0: none. */
  delayMs: number;
  /** Caps Lock is on: it is turned off around the text, which would otherwise come out in the wrong case. */
  capsLockOn: boolean;
}

/**
 * Types text: each character tapped on its key (with Shift on the shifted level). Characters the map lacks are
 * bound to spare keycodes in batches, two to a keycode (plain and shifted), all of a batch in one go before the
 * characters that need them: a batch covers as much of the text as the spare keycodes can hold, so text with
 * fewer distinct missing characters than twice the spare keycodes binds once. A keycode bound by an earlier call
 * or batch is kept while the text ahead still needs it, and replaced oldest first otherwise (the executor waits
 * out its settle time first).
 */
export function planText(map: KeyboardMap, text: TextKeysyms, bindings?: SpareBindings): InputStep[] {
  const planner = new Planner(map, bindings);
  const capsLock = text.capsLockOn ? map.capsLockKeycode : undefined;
  if (capsLock !== undefined) planner.release(planner.press([CAPS_LOCK]));
  const { keysyms } = text;
  // Without a Shift key the second level cannot be typed: one character per spare keycode.
  const perKeycode = map.shiftKeycode === undefined ? 1 : 2;
  const capacity = map.spareKeycodes.length;
  for (let start = 0; start < keysyms.length; ) {
    const missing: number[] = [];
    const keep = new Set<number>();
    let end = start;
    for (; end < keysyms.length; end++) {
      const keysym = keysyms[end] as number;
      if (map.locate(keysym) || missing.includes(keysym)) continue;
      const keycode = planner.boundKeycodeOf(keysym);
      const keycodesAfter = keep.size + (keycode !== undefined && !keep.has(keycode) ? 1 : 0);
      const missingAfter = missing.length + (keycode === undefined ? 1 : 0);
      if (Math.ceil(missingAfter / perKeycode) + keycodesAfter > capacity) break;
      if (keycode === undefined) missing.push(keysym);
      else keep.add(keycode);
    }
    if (end === start) {
      throw new NoSpareKeycodeError(
        "this text needs a character without a key, and the keyboard map has no spare keycode",
      );
    }
    planner.bindRows(rows(missing, perKeycode), keep);
    for (let index = start; index < end; index++) {
      if (index > 0) planner.wait(text.delayMs);
      planner.typeKeysym(keysyms[index] as number);
    }
    start = end;
  }
  if (capsLock !== undefined) planner.release(planner.press([CAPS_LOCK]));
  return planner.steps;
}

const CAPS_LOCK = 0xffe5;

function rows(keysyms: readonly number[], perKeycode: number): BoundRow[] {
  const result: BoundRow[] = [];
  for (let index = 0; index < keysyms.length; index += perKeycode) {
    const first = keysyms[index] as number;
    result.push([first, perKeycode === 2 ? (keysyms[index + 1] ?? first) : first]);
  }
  return result;
}
