import { isModifierKeysym } from "@browser-infra/keysyms";

/** Where a keysym sits in the keyboard map: its keycode, and whether Shift must be held to reach it. */
export interface KeyPosition {
  keycode: number;
  shift: boolean;
}

const NO_SYMBOL = 0;
const SHIFT_ROW = 0;
const LOCK_ROW = 1;
const CAPS_LOCK = 0xffe5;

/**
 * The server's core keyboard map (GetKeyboardMapping) and modifier map (GetModifierMapping), indexed for pressing.
 * Only the first two columns (group 1, plain and shifted) are used: reaching other groups or levels depends on
 * the server's XKB setup, and binding such a keysym to a spare keycode types it reliably instead.
 */
export class KeyboardMap {
  readonly minKeycode: number;
  readonly keysymsPerKeycode: number;
  /** The keycode pressed when a keysym needs Shift: the first Shift key of the modifier map. */
  readonly shiftKeycode: number | undefined;
  /** The Caps_Lock key that toggles the Lock modifier, if the map has one. */
  readonly capsLockKeycode: number | undefined;
  /** Keycodes with no keysym and no modifier role, highest first, free to bind keysyms the map lacks. */
  readonly spareKeycodes: readonly number[];
  private readonly rows: readonly (readonly number[])[];
  private readonly shiftKeycodes: ReadonlySet<number>;
  private readonly positions = new Map<number, KeyPosition>();

  constructor(minKeycode: number, rows: readonly (readonly number[])[], modifiers: readonly (readonly number[])[]) {
    this.minKeycode = minKeycode;
    this.rows = rows;
    this.keysymsPerKeycode = rows[0]?.length ?? 0;
    this.shiftKeycodes = new Set((modifiers[SHIFT_ROW] ?? []).filter((keycode) => keycode !== 0));
    this.shiftKeycode = [...this.shiftKeycodes][0];
    const modifierKeycodes = new Set(modifiers.flat());
    this.capsLockKeycode = (modifiers[LOCK_ROW] ?? []).find(
      (keycode) => keycode !== 0 && rows[keycode - minKeycode]?.[0] === CAPS_LOCK,
    );

    // Plain positions win over shifted ones, and a lower keycode over a higher one, like XKeysymToKeycode.
    const columns = this.shiftKeycode === undefined ? [0] : [0, 1];
    for (const column of columns) {
      rows.forEach((row, index) => {
        const keysym = row[column] ?? NO_SYMBOL;
        if (keysym === NO_SYMBOL || this.positions.has(keysym)) return;
        // A modifier acts through the modifier map whatever its level, so it is pressed alone.
        const shift = column === 1 && !isModifierKeysym(keysym);
        this.positions.set(keysym, { keycode: minKeycode + index, shift });
      });
    }

    const spare: number[] = [];
    rows.forEach((row, index) => {
      const keycode = minKeycode + index;
      if (row.every((keysym) => keysym === NO_SYMBOL) && !modifierKeycodes.has(keycode)) spare.push(keycode);
    });
    this.spareKeycodes = spare.reverse();
  }

  locate(keysym: number): KeyPosition | undefined {
    return this.positions.get(keysym);
  }

  isShift(keycode: number): boolean {
    return this.shiftKeycodes.has(keycode);
  }

  /** The keysyms of a keycode as the server reported them, to restore after a temporary binding. */
  rowOf(keycode: number): readonly number[] {
    const row = this.rows[keycode - this.minKeycode];
    if (!row) throw new RangeError(`keycode ${keycode} is outside the keyboard map`);
    return row;
  }
}
