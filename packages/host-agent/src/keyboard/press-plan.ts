import type { KeyboardMap, KeyPosition } from "./keyboard-map.ts";
import type { BoundRow, SpareBindings } from "./spare-bindings.ts";

/** One thing to do to the X server, in order. */
export type InputStep =
  | { kind: "down"; keycode: number }
  | { kind: "up"; keycode: number }
  /**
   * Point a spare keycode at keysyms the map lacks (level 1, and level 2 with Shift). The executor sends
   * consecutive binds as few requests, after the settle time of any keycode it rebinds.
   */
  | { kind: "bind"; keycode: number; row: BoundRow }
  /** Confirm everything so far reached the server, then wait (press_key's duration, a double click's spacing). */
  | { kind: "hold"; ms: number }
  /** Wait without confirming first (delays between characters, steps of a movement). */
  | { kind: "wait"; ms: number }
  | { kind: "motion"; x: number; y: number }
  | { kind: "button-down"; button: number }
  | { kind: "button-up"; button: number };

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
export function planPress(map: KeyboardMap, request: PressKeysyms, bindings?: SpareBindings): InputStep[] {
  const planner = new Planner(map, bindings);
  const held = planner.pressAll(request.holdItems);
  if (request.durationMs === 0) {
    for (const item of request.items) planner.release(planner.press(item));
  } else {
    const down = planner.pressAll(request.items);
    planner.steps.push({ kind: "hold", ms: request.durationMs });
    planner.release(down);
  }
  planner.release(held);
  return planner.steps;
}

/** A binding as the plan will have left it: `order` ranks bindings oldest first, for choosing which to replace. */
interface PlannedBinding {
  row: BoundRow;
  order: number;
}

/**
 * Builds a list of steps, keeping track of the keys it has down and of what spare keycodes will be bound to
 * (starting from the keyboard's current bindings), so later steps reuse a binding instead of making another.
 */
export class Planner {
  readonly steps: InputStep[] = [];
  private readonly map: KeyboardMap;
  private readonly down = new Set<number>();
  private readonly bound = new Map<number, PlannedBinding>();
  private order = 0;

  constructor(map: KeyboardMap, bindings?: SpareBindings) {
    this.map = map;
    const current = bindings ? [...bindings.entries()].sort(([, a], [, b]) => a.boundAt - b.boundAt) : [];
    for (const [keycode, binding] of current) this.bound.set(keycode, { row: binding.row, order: ++this.order });
  }

  /** Presses the keys of every item, item after item, and returns the keycodes pressed, in order. */
  pressAll(items: readonly (readonly number[])[]): number[] {
    return items.flatMap((item) => this.press(item));
  }

  /** Presses the keys of one item and returns the keycodes it pressed, in order. */
  press(keysyms: readonly number[]): number[] {
    const pressed: number[] = [];
    for (const keysym of keysyms) {
      const position = this.map.locate(keysym) ?? { keycode: this.bindBothLevels(keysym), shift: false };
      pressed.push(...this.pressAt(position));
    }
    return pressed;
  }

  release(keycodes: readonly number[]): void {
    for (const keycode of [...keycodes].reverse()) {
      if (!this.down.delete(keycode)) continue;
      this.steps.push({ kind: "up", keycode });
    }
  }

  /** Taps the key of one character: a keysym of the map, or one bound by bindRows. */
  typeKeysym(keysym: number): void {
    const position = this.map.locate(keysym) ?? this.boundPosition(keysym);
    if (!position) throw new Error(`keysym 0x${keysym.toString(16)} was neither in the map nor bound`);
    this.release(this.pressAt(position));
  }

  /** The spare keycode a keysym is bound to (at either level), if it is. */
  boundKeycodeOf(keysym: number): number | undefined {
    for (const [keycode, { row }] of this.bound) if (row.includes(keysym)) return keycode;
    return undefined;
  }

  /** Binds each row to a spare keycode outside `keep`, replacing the oldest bindings first. */
  bindRows(rows: readonly BoundRow[], keep: ReadonlySet<number>): void {
    const free = this.replaceable(keep);
    if (rows.length > free.length) {
      throw new NoSpareKeycodeError(
        `more characters without a key are needed at once than the keyboard map has spare keycodes (${this.map.spareKeycodes.length})`,
      );
    }
    rows.forEach((row, index) => {
      this.bind(free[index] as number, row);
    });
  }

  motion(x: number, y: number): void {
    this.steps.push({ kind: "motion", x, y });
  }

  button(press: boolean, button: number): void {
    this.steps.push({ kind: press ? "button-down" : "button-up", button });
  }

  wait(ms: number): void {
    if (ms > 0) this.steps.push({ kind: "wait", ms });
  }

  /** Confirms that the server processed everything so far, then waits: spacing by the server's clock. */
  hold(ms: number): void {
    this.steps.push({ kind: "hold", ms });
  }

  private pressAt(position: KeyPosition): number[] {
    const pressed: number[] = [];
    if (position.shift && this.map.shiftKeycode !== undefined && !this.isShiftDown()) {
      pressed.push(this.keyDown(this.map.shiftKeycode));
    }
    if (!this.down.has(position.keycode)) pressed.push(this.keyDown(position.keycode));
    return pressed;
  }

  private boundPosition(keysym: number): KeyPosition | undefined {
    const keycode = this.boundKeycodeOf(keysym);
    if (keycode === undefined) return undefined;
    return { keycode, shift: this.bound.get(keycode)?.row[0] !== keysym };
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

  /** press_key's binding: the keysym on both levels, so it types the same with Shift held. */
  private bindBothLevels(keysym: number): number {
    for (const [keycode, { row }] of this.bound) if (row[0] === keysym && row[1] === keysym) return keycode;
    const [keycode] = this.replaceable(new Set());
    if (keycode === undefined) {
      throw new NoSpareKeycodeError(
        `more keys without a keycode are held at once than the keyboard map has spare keycodes (${this.map.spareKeycodes.length})`,
      );
    }
    this.bind(keycode, [keysym, keysym]);
    return keycode;
  }

  private bind(keycode: number, row: BoundRow): void {
    this.bound.set(keycode, { row, order: ++this.order });
    this.steps.push({ kind: "bind", keycode, row });
  }

  /** Spare keycodes that may be bound now: not down, not kept; unbound ones first (highest first), then oldest. */
  private replaceable(keep: ReadonlySet<number>): number[] {
    const rank = (keycode: number) => this.bound.get(keycode)?.order ?? 0;
    return this.map.spareKeycodes
      .filter((keycode) => !this.down.has(keycode) && !keep.has(keycode))
      .map((keycode, index) => ({ keycode, index }))
      .sort((a, b) => rank(a.keycode) - rank(b.keycode) || a.index - b.index)
      .map(({ keycode }) => keycode);
  }
}
