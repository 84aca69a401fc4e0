import { parseKeyItem, validateKeyItems } from "@browser-infra/keysyms";
import type { Logger } from "pino";
import {
  DisplayUnavailableError,
  InvalidKeysError,
  PressCancelledError,
  PressInterruptedError,
  PressQueueFullError,
} from "./errors.ts";
import { KeyboardMap } from "./keyboard-map.ts";
import { executePress } from "./press-executor.ts";
import { planPress } from "./press-plan.ts";
import { X11Connection, X11ConnectionLostError } from "./x11-client.ts";

export interface PressRequest {
  keys: readonly string[];
  durationMs: number;
  holdKeys: readonly string[];
}

export interface Keyboard {
  /**
   * Presses the keys; resolves once the X server has processed every event. Aborting `signal`
   * drops the press if it is still queued, or cuts it short and releases its keys.
   */
  press(request: PressRequest, signal?: AbortSignal): Promise<void>;
  /**
   * Releases every key the X server reports down, cutting short a hold in progress, and turns
   * Caps Lock and Num Lock off: what one session did to the keyboard never reaches the next.
   */
  releaseAll(): Promise<void>;
  /** Cuts short a hold in progress, lets queued work finish, and closes the X connection. */
  close(): Promise<void>;
}

const MAPPING_NOTIFY_POINTER = 2;

/** A live connection with XTEST enabled and, unless a MappingNotify made it stale, the keyboard map. */
interface Session {
  connection: X11Connection;
  map: KeyboardMap | undefined;
}

/**
 * A keyboard on one X display, over one long-lived connection opened on first use and reopened after the
 * server goes away. Use one per display: it serializes its own calls, so two presses never interleave.
 */
export function openKeyboard(options: {
  display: string;
  logger: Logger;
  /** Presses that may wait behind the running one; more are refused with PressQueueFullError. */
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
  /** Presses queued behind the running job, not yet started. */
  private waiting = 0;
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
    if (this.waiting >= this.maxQueuedPresses) return Promise.reject(new PressQueueFullError(this.waiting));
    this.waiting++;
    let started = false;
    const start = () => {
      if (!started) this.waiting--;
      started = true;
    };
    return this.serialize(async (interruption) => {
      start();
      // The caller went away while the press waited: nothing was pressed, nothing needs to be.
      if (callSignal?.aborted) throw new PressCancelledError();
      const signal = callSignal ? AbortSignal.any([interruption, callSignal]) : interruption;
      const session = await this.connect();
      // Kept for the whole press even if a MappingNotify (such as one for our own spare binding) makes it stale.
      session.map ??= await loadMap(session.connection);
      const map = session.map;
      const steps = planPress(map, keysyms);
      try {
        await this.whileConnected(() => executePress(session.connection, map, steps, signal));
      } catch (error) {
        if (callSignal?.aborted && !interruption.aborted) throw new PressCancelledError();
        throw error;
      }
    }).finally(start);
  }

  releaseAll(): Promise<void> {
    this.interrupt();
    return this.serialize(async () => {
      const session = await this.connect();
      await this.whileConnected(async () => {
        await releaseKeysDown(session.connection, this.logger);
        await unlockModifiers(session.connection, this.logger);
      });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.interrupt();
    await this.queue;
    await this.session?.connection.close();
    this.session = undefined;
  }

  private interrupt(): void {
    this.interruption.abort();
    this.interruption = new AbortController();
  }

  /** Runs jobs one after another, each with the signal that interrupt() fires. */
  private serialize(job: (signal: AbortSignal) => Promise<void>): Promise<void> {
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

  private async whileConnected(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      if (error instanceof X11ConnectionLostError) {
        throw new DisplayUnavailableError(`X display ${this.display} went away during the press: ${error.message}`, {
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
    }
    this.connectedBefore = true;
    return session;
  }
}

async function loadMap(connection: X11Connection): Promise<KeyboardMap> {
  const [rows, modifiers] = await Promise.all([connection.getKeyboardMapping(), connection.getModifierMapping()]);
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
