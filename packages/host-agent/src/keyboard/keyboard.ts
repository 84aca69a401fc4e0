import { parseKeyItem, textKeysyms, validateKeyItems } from "@browser-infra/keysyms";
import type { Logger } from "pino";
import type { Point } from "../mouse/curve.ts";
import { type PointerAction, planPointer, pointsOf } from "../mouse/pointer-plan.ts";
import {
  DisplayUnavailableError,
  InvalidInputError,
  InvalidKeysError,
  PressCancelledError,
  PressInterruptedError,
  PressQueueFullError,
} from "./errors.ts";
import { KeyboardMap } from "./keyboard-map.ts";
import { executeSteps, SETTLE_MS, sendRows, waitUntil } from "./press-executor.ts";
import { type InputStep, planPress } from "./press-plan.ts";
import { SpareBindings } from "./spare-bindings.ts";
import { planText } from "./text-plan.ts";
import { X11Connection, X11ConnectionLostError } from "./x11-client.ts";

export interface PressRequest {
  keys: readonly string[];
  durationMs: number;
  holdKeys: readonly string[];
}

export interface TextRequest {
  text: string;
  /** Between characters; 0: none. */
  delayMs: number;
}

/** A mouse action, with its hold_keys as press_key items. */
export type PointerRequest = PointerAction & { holdKeys: readonly string[] };

/**
 * The X server's keyboard and mouse through XTEST. Every call is queued behind the ones before it and resolves
 * once the X server has processed its events, so keys and buttons of two calls never interleave. Aborting
 * `signal` drops a call still queued, or cuts it short and releases what it pressed.
 */
export interface Keyboard {
  press(request: PressRequest, signal?: AbortSignal): Promise<void>;
  /** Types the text exactly, whatever the layout and Caps Lock; see planText. */
  typeText(request: TextRequest, signal?: AbortSignal): Promise<void>;
  pointer(request: PointerRequest, signal?: AbortSignal): Promise<void>;
  /** Where the pointer is, once every call queued before has run. */
  pointerPosition(signal?: AbortSignal): Promise<Point>;
  /**
   * Releases every key and mouse button the X server reports down, cutting short a call in progress, turns
   * Caps Lock and Num Lock off and restores spare keycodes: what one session did to the keyboard and mouse
   * never reaches the next.
   */
  releaseAll(): Promise<void>;
  /** Cuts short a call in progress, lets queued work finish, and closes the X connection. */
  close(): Promise<void>;
}

const MAPPING_NOTIFY_POINTER = 2;

/**
 * How long spare keycode bindings stay after the last call that used them: a caller typing in a loop finds its
 * characters bound already. At least SETTLE_MS, so the restore never waits.
 */
const RESTORE_AFTER_MS = 5_000;

/** A live connection with XTEST enabled and, unless a MappingNotify made it stale, the keyboard map. */
interface Session {
  connection: X11Connection;
  map: KeyboardMap | undefined;
}

/** What a queued call works with: the connection, the map as it was when the call started, and its signal. */
interface CallContext {
  connection: X11Connection;
  map(): Promise<KeyboardMap>;
  signal: AbortSignal;
}

/**
 * A keyboard and mouse on one X display, over one long-lived connection opened on first use and reopened after
 * the server goes away. Use one per display: it serializes its own calls, so two calls never interleave.
 */
export function openKeyboard(options: {
  display: string;
  logger: Logger;
  /** Calls that may wait behind the running one; more are refused with PressQueueFullError. */
  maxQueuedPresses?: number;
  onReconnect?: () => void;
}): Keyboard {
  return new XTestKeyboard(
    options.display,
    options.logger,
    options.maxQueuedPresses ?? Number.POSITIVE_INFINITY,
    options.onReconnect ?? (() => {}),
  );
}

function parseItems(items: readonly string[]): number[][] {
  return items.map((item) => {
    const parsed = parseKeyItem(item);
    if (!parsed.ok) throw new Error(`unvalidated key item: ${parsed.reason}`);
    return parsed.keysyms;
  });
}

class XTestKeyboard implements Keyboard {
  private readonly display: string;
  private readonly logger: Logger;
  private session: Session | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private interruption = new AbortController();
  private closed = false;
  private connectedBefore = false;
  /** Calls queued behind the running job, not yet started. */
  private waiting = 0;
  /** What this keyboard has bound to spare keycodes, on the current connection. */
  private readonly bindings = new SpareBindings();
  private restoreTimer: NodeJS.Timeout | undefined;
  private readonly maxQueuedPresses: number;
  /** Told about every connection after the first, for metrics. */
  private readonly onReconnect: () => void;

  constructor(display: string, logger: Logger, maxQueuedPresses: number, onReconnect: () => void) {
    this.display = display;
    this.logger = logger.child({ component: "keyboard", display });
    this.maxQueuedPresses = maxQueuedPresses;
    this.onReconnect = onReconnect;
  }

  press(request: PressRequest, callSignal?: AbortSignal): Promise<void> {
    const problems = [...validateKeyItems("keys", request.keys), ...validateKeyItems("hold_keys", request.holdKeys)];
    if (problems.length > 0) return Promise.reject(new InvalidKeysError(problems));
    if (!Number.isSafeInteger(request.durationMs) || request.durationMs < 0) {
      return Promise.reject(new RangeError(`durationMs must be a non-negative integer, got ${request.durationMs}`));
    }
    const keysyms = {
      items: parseItems(request.keys),
      holdItems: parseItems(request.holdKeys),
      durationMs: request.durationMs,
    };
    return this.call(callSignal, async (context) => {
      await this.execute(context, planPress(await context.map(), keysyms, this.bindings));
    });
  }

  typeText(request: TextRequest, callSignal?: AbortSignal): Promise<void> {
    const parsed = textKeysyms("text", request.text);
    if (!parsed.ok) return Promise.reject(new InvalidInputError(parsed.problems));
    if (!Number.isSafeInteger(request.delayMs) || request.delayMs < 0) {
      return Promise.reject(new RangeError(`delayMs must be a non-negative integer, got ${request.delayMs}`));
    }
    return this.call(callSignal, async (context) => {
      const map = await context.map();
      const LOCK = 1 << 1;
      // One round trip: Caps Lock left on (by a press_key of Caps_Lock) would flip the case of letters.
      const capsLockOn = map.capsLockKeycode !== undefined && ((await context.connection.modifierState()) & LOCK) !== 0;
      const steps = planText(map, { keysyms: parsed.keysyms, delayMs: request.delayMs, capsLockOn }, this.bindings);
      await this.execute(context, steps);
    });
  }

  pointer(request: PointerRequest, callSignal?: AbortSignal): Promise<void> {
    const problems = validateKeyItems("hold_keys", request.holdKeys);
    if (problems.length > 0) return Promise.reject(new InvalidKeysError(problems));
    const { holdKeys, ...action } = request;
    const holdItems = parseItems(holdKeys);
    return this.call(callSignal, async (context) => {
      const { connection } = context;
      const outside = pointsOf(action).filter(
        (point) =>
          point.x < 0 || point.y < 0 || point.x >= connection.screenWidth || point.y >= connection.screenHeight,
      );
      if (outside.length > 0) {
        throw new InvalidInputError(
          outside.map(
            (point) =>
              `(${point.x}, ${point.y}) is outside the screen (${connection.screenWidth}x${connection.screenHeight})`,
          ),
        );
      }
      // Only a smooth move starts from where the pointer is; the rest start by going to their first point.
      const from = action.kind === "move" && action.smooth ? await connection.queryPointer() : { x: 0, y: 0 };
      await this.execute(context, planPointer(await context.map(), this.bindings, action, holdItems, from));
    });
  }

  pointerPosition(callSignal?: AbortSignal): Promise<Point> {
    return this.call(callSignal, async ({ connection }) => {
      const { x, y } = await connection.queryPointer();
      return { x, y };
    });
  }

  releaseAll(): Promise<void> {
    this.interrupt();
    return this.serialize(async () => {
      const session = await this.connect();
      await this.whileConnected(async () => {
        await releaseKeysDown(session.connection, this.logger);
        await releaseButtonsDown(session.connection, this.logger);
        await unlockModifiers(session.connection, this.logger);
        await this.restoreSpares(session.connection);
      });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.restoreTimer);
    this.interrupt();
    await this.queue;
    await this.session?.connection.close();
    this.session = undefined;
  }

  /**
   * Queues a call, refusing it when too many wait already. The call runs with the connection and a signal
   * that aborts when the caller cancels or releaseAll interrupts it.
   */
  private call<T>(callSignal: AbortSignal | undefined, work: (context: CallContext) => Promise<T>): Promise<T> {
    if (this.waiting >= this.maxQueuedPresses) return Promise.reject(new PressQueueFullError(this.waiting));
    this.waiting++;
    let started = false;
    const start = () => {
      if (!started) this.waiting--;
      started = true;
    };
    return this.serialize(async (interruption) => {
      start();
      // The caller went away while the call waited: nothing was sent, nothing needs to be.
      if (callSignal?.aborted) throw new PressCancelledError();
      const signal = callSignal ? AbortSignal.any([interruption, callSignal]) : interruption;
      const session = await this.connect();
      const map = async () => {
        // Kept for the whole call even if a MappingNotify (such as one for our own spare binding) makes it stale.
        session.map ??= await loadMap(session.connection, this.bindings);
        return session.map;
      };
      try {
        return await this.whileConnected(() => work({ connection: session.connection, map, signal }));
      } catch (error) {
        if (callSignal?.aborted && !interruption.aborted) throw new PressCancelledError();
        throw error;
      } finally {
        if (this.bindings.size > 0) this.scheduleRestore();
      }
    }).finally(start);
  }

  private execute(context: CallContext, steps: readonly InputStep[]): Promise<void> {
    return executeSteps(context.connection, steps, this.bindings, context.signal);
  }

  /** Restores the spare keycodes once input has been idle for RESTORE_AFTER_MS. */
  private scheduleRestore(): void {
    clearTimeout(this.restoreTimer);
    this.restoreTimer = setTimeout(() => {
      void this.serialize(async () => {
        const session = this.session;
        if (!session || session.connection.lost) return;
        await this.restoreSpares(session.connection);
      }).catch((error: unknown) => this.logger.warn({ err: error }, "could not restore spare keycodes"));
    }, RESTORE_AFTER_MS);
    this.restoreTimer.unref();
  }

  /** Gives every bound spare keycode its empty row back, once clients had time to read the last binding. */
  private async restoreSpares(connection: X11Connection): Promise<void> {
    if (this.bindings.size === 0) return;
    const keycodes = this.bindings.keycodes();
    await waitUntil(connection, this.bindings.settledAt(keycodes, SETTLE_MS));
    sendRows(connection, new Map(keycodes.map((keycode) => [keycode, [0, 0]])), 2);
    this.bindings.clear();
    await connection.sync();
  }

  private interrupt(): void {
    this.interruption.abort();
    this.interruption = new AbortController();
  }

  /** Runs jobs one after another, each with the signal that interrupt() fires. */
  private serialize<T>(job: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const signal = this.interruption.signal;
    const run = this.queue.then(() => {
      if (this.closed) throw new Error(`the keyboard on ${this.display} is closed`);
      // Queued before a releaseAll: pressing now would undo the release it asked for.
      if (signal.aborted) throw new PressInterruptedError();
      return job(signal);
    });
    this.queue = run.catch(() => undefined);
    return run.catch((error: unknown) => {
      throw signal.aborted && error instanceof Error && error.name === "AbortError"
        ? new PressInterruptedError()
        : error;
    });
  }

  private async whileConnected<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof X11ConnectionLostError) {
        throw new DisplayUnavailableError(`X display ${this.display} went away during the call: ${error.message}`, {
          cause: error,
          keysMayHaveBeenSent: true,
        });
      }
      throw error;
    }
  }

  /** Only called from serialized jobs, so two connections are never opened at once. */
  private async connect(): Promise<Session> {
    if (!this.session || this.session.connection.lost) this.session = await this.openSession();
    return this.session;
  }

  private async openSession(): Promise<Session> {
    // node-x11 would quietly fall back to $DISPLAY or :0.
    if (this.display === "") {
      throw new DisplayUnavailableError(
        "no X display is configured: set DISPLAY to a running X server, or install Xvfb (Debian/Ubuntu: apt-get install xvfb)",
      );
    }
    let connection: X11Connection;
    try {
      connection = await X11Connection.open(this.display);
    } catch (error) {
      throw new DisplayUnavailableError(
        `cannot connect to X display ${JSON.stringify(this.display)} (${error instanceof Error ? error.message : error}): ` +
          "install Xvfb (Debian/Ubuntu: apt-get install xvfb) and start it, or set DISPLAY to a running X server",
        { cause: error },
      );
    }
    try {
      await connection.enableXTest();
    } catch (error) {
      await connection.close();
      throw new DisplayUnavailableError(
        `X display ${this.display} lacks the XTEST extension that pressing keys needs (Xvfb has it)`,
        { cause: error },
      );
    }

    const session: Session = { connection, map: undefined };
    connection.onEvent((event) => {
      if (event.name === "MappingNotify" && event.request !== MAPPING_NOTIFY_POINTER) session.map = undefined;
    });
    connection.onLost((error) => {
      if (!this.closed) this.logger.warn({ err: error }, "lost the X connection; reconnecting on the next press");
    });
    this.logger.info({ minKeycode: connection.minKeycode, maxKeycode: connection.maxKeycode }, "connected to X");

    // A connection that broke mid-press may have left keys down on a server that is still running.
    if (this.connectedBefore) {
      this.onReconnect();
      await releaseKeysDown(connection, this.logger);
      await releaseButtonsDown(connection, this.logger);
    }
    // Bindings were made on the lost connection's server; a restarted one has none.
    this.bindings.clear();
    this.connectedBefore = true;
    return session;
  }
}

/** The keyboard map, with the spare keycodes bound for a while shown as the empty keycodes they are. */
async function loadMap(connection: X11Connection, bindings?: SpareBindings): Promise<KeyboardMap> {
  const [rows, modifiers] = await Promise.all([connection.getKeyboardMapping(), connection.getModifierMapping()]);
  for (const keycode of bindings?.keycodes() ?? []) {
    const row = rows[keycode - connection.minKeycode];
    if (row) rows[keycode - connection.minKeycode] = row.map(() => 0);
  }
  return new KeyboardMap(connection.minKeycode, rows, modifiers);
}

/** Caps_Lock and Num_Lock: a tap locks their modifier, and the lock outlives the press. */
const LOCK_KEYSYMS = [0xffe5, 0xff7f];

/** Taps each lock key whose modifier is locked, so that it is off again. */
async function unlockModifiers(connection: X11Connection, logger: Logger): Promise<void> {
  const [state, map, modifiers] = await Promise.all([
    connection.modifierState(),
    loadMap(connection),
    connection.getModifierMapping(),
  ]);
  const unlocked: number[] = [];
  for (const keysym of LOCK_KEYSYMS) {
    const keycode = map.locate(keysym)?.keycode;
    if (keycode === undefined) continue;
    const modifier = modifiers.findIndex((row) => row.includes(keycode));
    if (modifier < 0 || (state & (1 << modifier)) === 0) continue;
    connection.fakeKey(true, keycode);
    connection.fakeKey(false, keycode);
    unlocked.push(keysym);
  }
  if (unlocked.length === 0) return;
  await connection.sync();
  logger.info({ keysyms: unlocked }, "turned off locks that were left on");
}

/** QueryPointer's mask bits of buttons 1 to 5 (the core protocol reports no others). */
const BUTTON_MASKS = [1, 2, 3, 4, 5].map((button) => ({ button, mask: 1 << (7 + button) }));

async function releaseButtonsDown(connection: X11Connection, logger: Logger): Promise<void> {
  const { mask } = await connection.queryPointer();
  const down = BUTTON_MASKS.filter((entry) => (mask & entry.mask) !== 0).map((entry) => entry.button);
  if (down.length === 0) return;
  for (const button of down) connection.fakeButton(false, button);
  await connection.sync();
  logger.warn({ buttons: down }, "released mouse buttons that were left down");
}

async function releaseKeysDown(connection: X11Connection, logger: Logger): Promise<void> {
  const keymap = await connection.queryKeymap();
  const down: number[] = [];
  for (let keycode = connection.minKeycode; keycode <= connection.maxKeycode; keycode++) {
    if ((keymap[keycode >> 3] ?? 0) & (1 << (keycode & 7))) down.push(keycode);
  }
  if (down.length === 0) return;
  for (const keycode of down) connection.fakeKey(false, keycode);
  await connection.sync();
  logger.warn({ keycodes: down }, "released keys that were left down");
}
