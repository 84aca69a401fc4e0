import { createRequire } from "node:module";

// node-x11 ships no type declarations; these describe only the parts of it this repository uses.

/** The fields node-x11 decodes from core events (key events carry the modifier state in `buttons`). */
export interface X11Event {
  name: string;
  wid?: number;
  keycode?: number;
  time?: number;
  buttons?: number;
  /** MappingNotify: 0 modifier map, 1 keyboard map, 2 pointer map. */
  request?: number;
}

/** An X protocol error, as node-x11 reports it. */
export interface X11ProtocolError extends Error {
  error: number;
  seq: number;
  badParam: number;
  majorOpcode: number;
  minorOpcode: number;
}

type ReplyCallback<T> = (error: Error | null | undefined, value: T) => boolean;

interface RawXTest {
  FakeInput(type: number, detail: number, time: number, window: number, x: number, y: number): void;
  KeyPress: number;
  KeyRelease: number;
  ButtonPress: number;
  ButtonRelease: number;
  MotionNotify: number;
}

/** QueryPointer's answer: the pointer on the root window and the modifier and button state. */
export interface PointerState {
  x: number;
  y: number;
  /** Bits 0-7 the modifiers (Shift, Lock, Control, Mod1..Mod5), bits 8-12 buttons 1 to 5. */
  mask: number;
}

export interface RawWindowValues {
  eventMask?: number;
  backgroundPixel?: number;
}

/** The node-x11 client object: core requests are methods named after the protocol request. */
export interface RawXClient {
  on(event: "error", listener: (error: Error) => void): void;
  on(event: "event", listener: (event: X11Event) => void): void;
  on(event: "end", listener: () => void): void;
  AllocID(): number;
  CreateWindow(
    id: number,
    parent: number,
    x: number,
    y: number,
    width: number,
    height: number,
    borderWidth: number,
    depth: number,
    windowClass: number,
    visual: number,
    values: RawWindowValues,
  ): void;
  MapWindow(window: number): void;
  /** revertTo: 0 None, 1 PointerRoot, 2 Parent. */
  SetInputFocus(window: number, revertTo: number): void;
  GetInputFocus(callback: ReplyCallback<{ focus: number }>): void;
  QueryTree(window: number, callback: ReplyCallback<{ children: number[] }>): void;
  QueryPointer(window: number, callback: ReplyCallback<{ rootX: number; rootY: number; keyMask: number }>): void;
  InternAtom(onlyIfExists: boolean, name: string, callback: ReplyCallback<number>): void;
  GetProperty(
    del: number,
    window: number,
    property: number,
    type: number,
    longOffset: number,
    longLength: number,
    callback: ReplyCallback<{ type: number; format: number; data: Buffer }>,
  ): void;
  GetWindowAttributes(window: number, callback: ReplyCallback<{ mapState: number; overrideRedirect: number }>): void;
  GetKeyboardMapping(firstKeycode: number, count: number, callback: ReplyCallback<number[][]>): void;
  GetModifierMapping(callback: ReplyCallback<number[][]>): void;
  ChangeKeyboardMapping(firstKeycode: number, keysymsPerKeycode: number, keysyms: readonly number[]): void;
  QueryKeymap(callback: ReplyCallback<Buffer>): void;
  require(extension: "xtest", callback: (error: Error | null | undefined, extension: RawXTest) => void): void;
  terminate(): void;
  stream: { on(event: "close", listener: () => void): void; destroyed: boolean; destroy(): void };
}

interface RawDisplay {
  client: RawXClient;
  min_keycode: number;
  max_keycode: number;
  screen: { root: number; white_pixel: number; pixel_width: number; pixel_height: number }[];
}

interface X11Module {
  createClient(
    options: { display: string; disableBigRequests: boolean; bufferRequests: boolean },
    callback: (error: Error | undefined, display: RawDisplay) => void,
  ): RawXClient;
  eventMask: Record<"KeyPress" | "KeyRelease" | "StructureNotify", number>;
}

const x11 = createRequire(import.meta.url)("x11") as X11Module;

export const eventMask = x11.eventMask;

function isProtocolError(error: Error): error is X11ProtocolError {
  return typeof (error as Partial<X11ProtocolError>).error === "number";
}

/** Why an X11Connection stopped working: the server went away or the socket failed. */
export class X11ConnectionLostError extends Error {}

/**
 * One connection to an X server with promise-based requests. Every reply-awaiting call rejects once the
 * connection is lost, so a caller never waits forever on a server that died.
 */
export class X11Connection {
  readonly raw: RawXClient;
  readonly minKeycode: number;
  readonly maxKeycode: number;
  readonly root: number;
  readonly whitePixel: number;
  /** The root window's size in pixels, as the server announced it at connection setup. */
  readonly screenWidth: number;
  readonly screenHeight: number;
  private lostReason: X11ConnectionLostError | undefined;
  private readonly lostController = new AbortController();
  private readonly pending = new Set<(error: Error) => void>();
  private readonly eventListeners = new Set<(event: X11Event) => void>();
  private readonly lostListeners = new Set<(error: X11ConnectionLostError) => void>();
  // Errors of requests that have no reply (FakeInput, ChangeKeyboardMapping) arrive on their own; sync() reports them.
  private unreportedErrors: X11ProtocolError[] = [];
  private xtest: RawXTest | undefined;

  private constructor(display: RawDisplay) {
    this.raw = display.client;
    this.minKeycode = display.min_keycode;
    this.maxKeycode = display.max_keycode;
    const screen = display.screen[0];
    if (!screen) throw new Error("X server reported no screen");
    this.root = screen.root;
    this.whitePixel = screen.white_pixel;
    this.screenWidth = screen.pixel_width;
    this.screenHeight = screen.pixel_height;
    this.raw.on("event", (event) => {
      for (const listener of this.eventListeners) listener(event);
    });
    this.raw.on("end", () => this.lose(new X11ConnectionLostError("the X server closed the connection")));
    this.raw.stream.on("close", () => this.lose(new X11ConnectionLostError("the connection to the X server closed")));
  }

  /** Connects and completes the X11 setup; rejects with the reason (no socket, refused, setup closed). */
  static open(display: string): Promise<X11Connection> {
    return new Promise((resolve, reject) => {
      let connection: X11Connection | undefined;
      let client: RawXClient;
      try {
        client = x11.createClient({ display, disableBigRequests: true, bufferRequests: true }, (error, raw) => {
          if (error) reject(error);
          else {
            connection = new X11Connection(raw);
            resolve(connection);
          }
        });
      } catch (error) {
        reject(error);
        return;
      }
      // Without a listener node-x11 throws X errors and socket errors at the process, killing it.
      client.on("error", (error) => {
        if (!connection) reject(error);
        else if (isProtocolError(error)) connection.unreportedErrors.push(error);
        else connection.lose(new X11ConnectionLostError(`X connection failed: ${error.message}`, { cause: error }));
      });
    });
  }

  get lost(): X11ConnectionLostError | undefined {
    return this.lostReason;
  }

  /** Aborted when the connection is lost, so waits can end early. */
  get lostSignal(): AbortSignal {
    return this.lostController.signal;
  }

  onEvent(listener: (event: X11Event) => void): void {
    this.eventListeners.add(listener);
  }

  onLost(listener: (error: X11ConnectionLostError) => void): void {
    this.lostListeners.add(listener);
  }

  /** Loads the XTEST extension, which fakeKey, fakeButton and fakeMotion need. */
  async enableXTest(): Promise<void> {
    this.xtest = await this.call<RawXTest>((done) => this.raw.require("xtest", done));
  }

  /** Queues an XTEST key event (sent with the next batch, confirmed by the next sync). */
  fakeKey(press: boolean, keycode: number): void {
    const xtest = this.requireXTest();
    xtest.FakeInput(press ? xtest.KeyPress : xtest.KeyRelease, keycode, 0, 0, 0, 0);
  }

  /** Queues an XTEST button event (1 left, 2 middle, 3 right, 4-7 wheel, 8 back, 9 forward). */
  fakeButton(press: boolean, button: number): void {
    const xtest = this.requireXTest();
    xtest.FakeInput(press ? xtest.ButtonPress : xtest.ButtonRelease, button, 0, 0, 0, 0);
  }

  /** Queues an XTEST pointer motion to (x, y) on the root window, in absolute coordinates. */
  fakeMotion(x: number, y: number): void {
    const xtest = this.requireXTest();
    xtest.FakeInput(xtest.MotionNotify, 0, 0, this.root, x, y);
  }

  changeKeyboardMapping(firstKeycode: number, keysymsPerKeycode: number, keysyms: readonly number[]): void {
    this.throwIfLost();
    this.raw.ChangeKeyboardMapping(firstKeycode, keysymsPerKeycode, keysyms);
  }

  /** Rows of keysyms for every keycode from minKeycode to maxKeycode. */
  getKeyboardMapping(): Promise<number[][]> {
    const count = this.maxKeycode - this.minKeycode + 1;
    return this.call((done) => this.raw.GetKeyboardMapping(this.minKeycode, count, done));
  }

  /** Eight rows (Shift, Lock, Control, Mod1..Mod5) of keycodes, 0 meaning none. */
  getModifierMapping(): Promise<number[][]> {
    return this.call((done) => this.raw.GetModifierMapping(done));
  }

  /** The modifier state now, locks included: bit i is modifier i (Shift, Lock, Control, Mod1..Mod5). */
  async modifierState(): Promise<number> {
    return (await this.queryPointer()).mask & 0xff;
  }

  /** Where the pointer is on the root window, and which modifiers and buttons (1 to 5) are down. */
  async queryPointer(): Promise<PointerState> {
    const reply = await this.call<{ rootX: number; rootY: number; keyMask: number }>((done) =>
      this.raw.QueryPointer(this.root, done),
    );
    return { x: reply.rootX, y: reply.rootY, mask: reply.keyMask };
  }

  /** The window that has the keyboard focus (0 None, 1 PointerRoot). */
  async getInputFocus(): Promise<number> {
    return (await this.call<{ focus: number }>((done) => this.raw.GetInputFocus(done))).focus;
  }

  /** Gives the keyboard focus to the window; it reverts to PointerRoot if the window goes away. */
  setInputFocus(window: number): void {
    this.throwIfLost();
    this.raw.SetInputFocus(window, 1);
  }

  async children(window: number): Promise<number[]> {
    return (await this.call<{ children: number[] }>((done) => this.raw.QueryTree(window, done))).children;
  }

  /** Whether the window is mapped and all its ancestors too (map state Viewable). */
  async viewable(window: number): Promise<boolean> {
    const VIEWABLE = 2;
    return (
      (await this.call<{ mapState: number }>((done) => this.raw.GetWindowAttributes(window, done))).mapState ===
      VIEWABLE
    );
  }

  /** The first 32-bit value of a CARDINAL property (such as _NET_WM_PID); undefined when the window has none. */
  async cardinalProperty(window: number, name: string): Promise<number | undefined> {
    const CARDINAL = 6;
    const atom = await this.call<number>((done) => this.raw.InternAtom(false, name, done));
    const property = await this.call<{ type: number; format: number; data: Buffer }>((done) =>
      this.raw.GetProperty(0, window, atom, CARDINAL, 0, 1, done),
    );
    return property.format === 32 && property.data.length >= 4 ? property.data.readUInt32LE(0) : undefined;
  }

  /** The 256-bit vector of keys currently down, one bit per keycode. */
  queryKeymap(): Promise<Buffer> {
    return this.call((done) => this.raw.QueryKeymap(done));
  }

  /** One round trip: resolves once the server has processed every request sent before, failing if any of them failed. */
  async sync(): Promise<void> {
    await this.call((done) => this.raw.GetInputFocus(done));
    const [error] = this.unreportedErrors;
    this.unreportedErrors = [];
    if (error) throw error;
  }

  /** Closes the connection, flushing what is queued, and resolves once the socket is gone. */
  close(): Promise<void> {
    if (this.lostReason || this.raw.stream.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      this.onLost(() => resolve());
      this.raw.terminate();
      // A server that stopped reading would keep a half-closed socket open forever.
      setTimeout(() => this.raw.stream.destroy(), 1000).unref();
    });
  }

  private throwIfLost(): void {
    if (this.lostReason) throw this.lostReason;
  }

  private requireXTest(): RawXTest {
    this.throwIfLost();
    if (!this.xtest) throw new Error("XTEST is not enabled on this connection");
    return this.xtest;
  }

  private call<T>(issue: (done: ReplyCallback<T>) => void): Promise<T> {
    if (this.lostReason) return Promise.reject(this.lostReason);
    return new Promise<T>((resolve, reject) => {
      this.pending.add(reject);
      try {
        issue((error, value) => {
          this.pending.delete(reject);
          if (error) reject(error);
          else resolve(value);
          // true tells node-x11 the error was handled, so it does not emit it as well
          return true;
        });
      } catch (error) {
        this.pending.delete(reject);
        reject(error);
      }
    });
  }

  private lose(reason: X11ConnectionLostError): void {
    if (this.lostReason) return;
    this.lostReason = reason;
    for (const reject of this.pending) reject(reason);
    this.pending.clear();
    this.lostController.abort(reason);
    for (const listener of this.lostListeners) listener(reason);
    if (!this.raw.stream.destroyed) this.raw.stream.destroy();
  }
}
