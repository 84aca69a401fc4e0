/** Keysyms bound to one spare keycode: level 1 (plain) and level 2 (with Shift). */
export type BoundRow = readonly [number, number];

/** One spare keycode's temporary binding, as the X server has it. */
export interface Binding {
  row: BoundRow;
  /** performance.now() when the binding was sent: the keycode may not be rebound before SETTLE_MS later. */
  boundAt: number;
}

/**
 * The spare keycodes this keyboard has bound to keysyms the map lacks, as they are on the server now.
 * Bindings outlive the press or text that made them: the next call that types the same characters finds
 * them bound (no rebinding, no settle), and the keyboard restores every spare keycode once input has been
 * idle for a while (see RESTORE_AFTER_MS in keyboard.ts), and when it releases everything.
 */
export class SpareBindings {
  private readonly bindings = new Map<number, Binding>();

  get size(): number {
    return this.bindings.size;
  }

  get(keycode: number): Binding | undefined {
    return this.bindings.get(keycode);
  }

  entries(): IterableIterator<[number, Binding]> {
    return this.bindings.entries();
  }

  keycodes(): number[] {
    return [...this.bindings.keys()];
  }

  set(keycode: number, binding: Binding): void {
    this.bindings.set(keycode, binding);
  }

  clear(): void {
    this.bindings.clear();
  }

  /** The latest time before which none of these keycodes may be rebound or restored. */
  settledAt(keycodes: Iterable<number>, settleMs: number): number {
    let at = 0;
    for (const keycode of keycodes) {
      const binding = this.bindings.get(keycode);
      if (binding) at = Math.max(at, binding.boundAt + settleMs);
    }
    return at;
  }
}

/** Groups keycodes into runs of consecutive ones, so that each run is one ChangeKeyboardMapping request. */
export function consecutiveRuns(keycodes: Iterable<number>): number[][] {
  const runs: number[][] = [];
  for (const keycode of [...new Set(keycodes)].sort((a, b) => a - b)) {
    const run = runs.at(-1);
    if (run && run.at(-1) === keycode - 1) run.push(keycode);
    else runs.push([keycode]);
  }
  return runs;
}
