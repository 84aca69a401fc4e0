import { eventMask, X11Connection, type X11Event } from "../../packages/host-agent/src/keyboard/x11-client.ts";
import { keysymName } from "../../packages/keysyms/src/index.ts";

export interface RecordedKeyEvent {
  type: "press" | "release";
  keycode: number;
  /** The keysym the event types: column 1 of the keycode's row when Shift is in `state`, else column 0. */
  keysym: number;
  /** Modifier bits before the event: Shift 1, Lock 2, Control 4, Mod1 8 … Mod5 128. */
  state: number;
  /** X server time in milliseconds. */
  time: number;
}

export interface KeyRecorder {
  readonly window: number;
  /** Every key event received since the start or the last clear(), in order. */
  readonly events: readonly RecordedKeyEvent[];
  /** Resolves with the events once at least `count` have arrived; rejects, listing them, after the timeout. */
  waitForEvents(count: number, timeoutMs?: number): Promise<RecordedKeyEvent[]>;
  /** Resolves with the events once `done(events)` holds; rejects, listing them, after the timeout. */
  waitUntil(done: (events: readonly RecordedKeyEvent[]) => boolean, timeoutMs?: number): Promise<RecordedKeyEvent[]>;
  clear(): void;
  /** Keycodes the server reports down (QueryKeymap). */
  keysDown(): Promise<number[]>;
  /** The server's keyboard map now, one row of keysyms per keycode from minKeycode. */
  keyboardMapping(): Promise<number[][]>;
  close(): Promise<void>;
}

const modifierNames = ["Shift", "Lock", "Control", "Mod1", "Mod2", "Mod3", "Mod4", "Mod5"];
const SHIFT_MASK = 1;
const MAPPING_NOTIFY_KEYBOARD = 1;
const REVERT_TO_PARENT = 2;

/** "press A (Shift)": the event's type, keysym name (or U+XXXX) and the modifiers that were down. */
export function describeKeyEvent(event: RecordedKeyEvent): string {
  const name =
    keysymName(event.keysym) ??
    (event.keysym >= 0x01000000
      ? `U+${(event.keysym & 0xffffff).toString(16).toUpperCase().padStart(4, "0")}`
      : `0x${event.keysym.toString(16)}`);
  const modifiers = modifierNames.filter((_, bit) => event.state & (1 << bit));
  return `${event.type} ${name}${modifiers.length > 0 ? ` (${modifiers.join("+")})` : ""}`;
}

/**
 * A real X client: a mapped window holding the input focus that records every KeyPress and KeyRelease it gets.
 * Like Xlib, it re-reads the keyboard map on MappingNotify before translating the events that follow.
 */
export async function startKeyRecorder(display: string): Promise<KeyRecorder> {
  const connection = await X11Connection.open(display);
  let rows = await connection.getKeyboardMapping();
  const events: RecordedKeyEvent[] = [];
  const waiters = new Set<() => void>();
  let mapped: () => void = () => undefined;
  const mappedWindow = new Promise<void>((resolve) => {
    mapped = resolve;
  });

  // Events are handled strictly in order, so a key event waits for the map its MappingNotify announced.
  let handling = Promise.resolve();
  const handle = async (event: X11Event) => {
    if (event.name === "MapNotify") mapped();
    if (event.name === "MappingNotify" && event.request === MAPPING_NOTIFY_KEYBOARD) {
      rows = await connection.getKeyboardMapping();
    }
    if (event.name !== "KeyPress" && event.name !== "KeyRelease") return;
    const keycode = event.keycode ?? 0;
    const state = event.buttons ?? 0;
    const row = rows[keycode - connection.minKeycode] ?? [];
    const shifted = state & SHIFT_MASK ? row[1] : undefined;
    events.push({
      type: event.name === "KeyPress" ? "press" : "release",
      keycode,
      keysym: shifted || (row[0] ?? 0),
      state,
      time: event.time ?? 0,
    });
    for (const waiter of waiters) waiter();
  };
  connection.onEvent((event) => {
    handling = handling.then(() => handle(event));
  });

  const window = connection.raw.AllocID();
  connection.raw.CreateWindow(window, connection.root, 0, 0, 320, 200, 0, 0, 1, 0, {
    backgroundPixel: connection.whitePixel,
    eventMask: eventMask.KeyPress | eventMask.KeyRelease | eventMask.StructureNotify,
  });
  connection.raw.MapWindow(window);
  await mappedWindow;
  // Only a viewable window can take the focus; with no window manager nobody else will give it one.
  connection.raw.SetInputFocus(window, REVERT_TO_PARENT);
  await connection.sync();

  const waitUntil = (
    done: (received: readonly RecordedKeyEvent[]) => boolean,
    timeoutMs = 5000,
  ): Promise<RecordedKeyEvent[]> => {
    if (done(events)) return Promise.resolve([...events]);
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done(events)) return;
        stop();
        resolve([...events]);
      };
      const timer = setTimeout(() => {
        stop();
        reject(new Error(`timed out waiting for key events; received: ${events.map(describeKeyEvent).join(", ")}`));
      }, timeoutMs);
      const stop = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
    });
  };

  return {
    window,
    events,
    waitForEvents: (count, timeoutMs) => waitUntil((received) => received.length >= count, timeoutMs),
    waitUntil,
    clear() {
      events.length = 0;
    },
    async keysDown() {
      const keymap = await connection.queryKeymap();
      const down: number[] = [];
      for (let keycode = 0; keycode < 256; keycode++) {
        if ((keymap[keycode >> 3] ?? 0) & (1 << (keycode & 7))) down.push(keycode);
      }
      return down;
    },
    keyboardMapping: () => connection.getKeyboardMapping(),
    close: () => connection.close(),
  };
}
