import type { KeyboardMap } from "./keyboard-map.ts";

/** One thing to do to the X server, in order. */
export type KeyStep =
  | { kind: "down"; keycode: number }
  | { kind: "up"; keycode: number }
  /** Point a spare keycode at a keysym the keyboard map lacks. */
  | { kind: "bind"; keycode: number; keysym: number }
  /** Let clients read the current bindings before spare keycodes are pointed elsewhere. */
  | { kind: "settle" }
  /** Confirm everything so far reached the server, then wait. */
  | { kind: "hold"; ms: number };

export interface PressKeysyms {
  /** One entry per press_key item, each the keysyms of that item in press order. */
  items: readonly (readonly number[])[];
  holdItems: readonly (readonly number[])[];
  durationMs: number;
}

/** More keys without a keycode were needed down at once than the keyboard map has spare keycodes. */
export class NoSpareKeycodeError extends Error {}

/**
 * Turns parsed press_key items into key events. Tap (durationMs 0): each item down in order and up in reverse,
 * item after item. Hold: every key of every item down, wait, all up in reverse. hold_keys go down first and up
 * last. Shift is added for keysyms on the shifted level unless a Shift key is already down, and a key already
 * down is neither pressed again nor released by the item that found it down.
 */
export function planPress(map: KeyboardMap, request: PressKeysyms): KeyStep[] {
  const planner = new Planner(map);
  const held = request.holdItems.flatMap((item) => planner.press(item));
  if (request.durationMs === 0) {
    for (const item of request.items) planner.release(planner.press(item));
  } else {
    const down = request.items.flatMap((item) => planner.press(item));
    planner.steps.push({ kind: "hold", ms: request.durationMs });
    planner.release(down);
  }
  planner.release(held);
  return planner.steps;
}

class Planner {
  readonly steps: KeyStep[] = [];
  private readonly map: KeyboardMap;
  private readonly down = new Set<number>();
  private readonly bound = new Map<number, number>(); // keysym → spare keycode

  constructor(map: KeyboardMap) {
    this.map = map;
  }

  /** Presses the keys of one item and returns the keycodes it pressed, in order. */
  press(keysyms: readonly number[]): number[] {
    const pressed: number[] = [];
    for (const keysym of keysyms) {
      const position = this.map.locate(keysym) ?? { keycode: this.bind(keysym), shift: false };
      if (position.shift && this.map.shiftKeycode !== undefined && !this.isShiftDown()) {
        pressed.push(this.keyDown(this.map.shiftKeycode));
      }
      if (!this.down.has(position.keycode)) pressed.push(this.keyDown(position.keycode));
    }
    return pressed;
  }

  release(keycodes: readonly number[]): void {
    for (const keycode of [...keycodes].reverse()) {
      if (!this.down.delete(keycode)) continue;
      this.steps.push({ kind: "up", keycode });
    }
  }

  private keyDown(keycode: number): number {
    this.down.add(keycode);
    this.steps.push({ kind: "down", keycode });
    return keycode;
  }

  private isShiftDown(): boolean {
    for (const keycode of this.down) if (this.map.isShift(keycode)) return true;
    return false;
  }

  private bind(keysym: number): number {
    const existing = this.bound.get(keysym);
    if (existing !== undefined) return existing;
    let keycode = this.freeSpare();
    if (keycode === undefined) {
      // Rebinding keycodes that are up is safe once clients have had time to look up what they typed.
      this.steps.push({ kind: "settle" });
      for (const [boundKeysym, boundKeycode] of this.bound) {
        if (!this.down.has(boundKeycode)) this.bound.delete(boundKeysym);
      }
      keycode = this.freeSpare();
    }
    if (keycode === undefined) {
      throw new NoSpareKeycodeError(
        `more keys without a keycode are held at once than the keyboard map has spare keycodes (${this.map.spareKeycodes.length})`,
      );
    }
    this.bound.set(keysym, keycode);
    this.steps.push({ kind: "bind", keycode, keysym });
    return keycode;
  }

  private freeSpare(): number | undefined {
    const used = new Set(this.bound.values());
    return this.map.spareKeycodes.find((keycode) => !used.has(keycode));
  }
}
