/** No X display to press keys on: none configured, none running, or it went away. */
export class DisplayUnavailableError extends Error {
  /** True when the display went away during a press, after some key events may have reached it. */
  readonly keysMayHaveBeenSent: boolean;

  constructor(message: string, options: { cause?: unknown; keysMayHaveBeenSent?: boolean } = {}) {
    super(message, { cause: options.cause });
    this.name = "DisplayUnavailableError";
    this.keysMayHaveBeenSent = options.keysMayHaveBeenSent ?? false;
  }
}

/** Some keys or hold_keys items do not parse; thrown before any event is sent. */
export class InvalidKeysError extends Error {
  /** One message per bad item, such as `keys[2]: unknown key "Foo"`. */
  readonly problems: string[];

  constructor(problems: string[]) {
    super(`invalid keys: ${problems.join("; ")}`);
    this.name = "InvalidKeysError";
    this.problems = problems;
  }
}

/** A hold was cut short because every key was being released (releaseAll or close, as on SIGTERM). */
export class PressInterruptedError extends Error {
  constructor() {
    super("the press was interrupted: all keys were released");
    this.name = "PressInterruptedError";
  }
}

/** The caller cancelled the press (or its deadline passed); its keys were released, or never pressed. */
export class PressCancelledError extends Error {
  constructor() {
    super("the press was cancelled by its caller: its keys were released");
    this.name = "PressCancelledError";
  }
}

/** Too many presses are waiting already; this one was not queued and pressed nothing. */
export class PressQueueFullError extends Error {
  constructor(waiting: number) {
    super(`${waiting} presses are waiting on this display already; try again when they are done`);
    this.name = "PressQueueFullError";
  }
}

/** A request the display cannot carry out as given (a point outside the screen, text that cannot be typed). */
export class InvalidInputError extends Error {
  readonly problems: string[];

  constructor(problems: string[]) {
    super(`invalid input: ${problems.join("; ")}`);
    this.name = "InvalidInputError";
    this.problems = problems;
  }
}
