/**
 * The bounds and defaults of the mouse and type_text calls, in one place: the gateway validates requests with
 * them (and sizes its deadline to the agent from plannedDurationMs) and the host agent checks them again at its
 * own boundary. Each bound is far beyond what a computer-use agent needs, and keeps one call from holding a
 * host's input for long or from making the agent plan millions of events.
 */
export const INPUT_LIMITS = {
  /** X11 coordinates are signed 16-bit; whether a point is on the screen is the agent's check. */
  maxCoordinate: 32_767,
  /** A triple click is the most any UI counts; more is a typo. */
  maxClicks: 10,
  /** Wheel clicks per axis and call: about 50 px each in Chromium, so 500 scroll 25 000 px. */
  maxScrollClicks: 500,
  /** Points of a drag path. */
  maxPathPoints: 1_000,
  /** Moves per segment of a drag without smooth. */
  maxStepsPerSegment: 1_000,
  /** Characters (code points) of one type_text; press_key's 10 000 keys are the same order. */
  maxTextCharacters: 10_000,
} as const;

/** Drag defaults when the caller gives none: ten moves a segment, 10 ms apart. */
export const DEFAULT_STEPS_PER_SEGMENT = 10;
export const DEFAULT_STEP_DELAY_MS = 10;

/**
 * Between the clicks of a double or triple click. Chromium counts a press as a repeat only when its time
 * differs from the previous one's (same-millisecond presses are taken for one event delivered twice) and
 * falls within the double-click time (500 ms), so the presses are a few milliseconds apart.
 */
export const CLICK_INTERVAL_MS = 5;

/** A smooth movement's duration when the caller gives none: quick for short distances, at most a second. */
export function durationForDistance(distance: number): number {
  return Math.round(Math.min(1_000, 120 + distance * 0.6));
}

/** The longest a smooth movement without duration_ms takes (durationForDistance's ceiling). */
const MAX_AUTO_DURATION_MS = 1_000;

/**
 * How long typing may wait on spare keycodes, at most: each batch of characters without a key waits up to
 * 400 ms (the agent's SETTLE_MS before rebinding and BIND_WAIT_MS after binding), and a batch holds at least
 * 16 characters on any keyboard map with 8 spare keycodes (Xvfb's default map has 19).
 */
export function textSettleAllowanceMs(characters: number): number {
  return Math.ceil(characters / 16) * 400;
}

export type PlannedInput =
  | { kind: "move"; smooth: boolean; durationMs: number }
  | { kind: "click"; clicks: number }
  | {
      kind: "drag";
      points: number;
      delayMs: number;
      smooth: boolean;
      durationMs: number;
      stepsPerSegment: number;
      stepDelayMs: number;
    }
  | { kind: "scroll" }
  | { kind: "type"; characters: number; delayMs: number };

/** The time a call spends waiting on purpose (delays, smooth movements, clicks' spacing), at most. */
export function plannedDurationMs(input: PlannedInput): number {
  switch (input.kind) {
    case "move":
      return input.smooth ? input.durationMs || MAX_AUTO_DURATION_MS : 0;
    case "click":
      return Math.max(0, input.clicks - 1) * CLICK_INTERVAL_MS;
    case "drag": {
      const moving = input.smooth
        ? input.durationMs || MAX_AUTO_DURATION_MS
        : (input.points - 1) * (input.stepsPerSegment || DEFAULT_STEPS_PER_SEGMENT) * input.stepDelayMs;
      return input.delayMs + moving;
    }
    case "scroll":
      return 0;
    case "type":
      return Math.max(0, input.characters - 1) * input.delayMs;
  }
}
