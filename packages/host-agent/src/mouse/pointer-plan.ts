import { CLICK_INTERVAL_MS, durationForDistance } from "@browser-infra/keysyms";
import type { KeyboardMap } from "../keyboard/keyboard-map.ts";
import { type InputStep, Planner } from "../keyboard/press-plan.ts";
import type { SpareBindings } from "../keyboard/spare-bindings.ts";
import { bezierPath, distance, linearPath, type Point } from "./curve.ts";

/** X core buttons: 1 left, 2 middle, 3 right; the wheel is 4 up, 5 down, 6 left, 7 right; 8 back, 9 forward. */
export const BUTTONS = { left: 1, middle: 2, right: 3, back: 8, forward: 9 } as const;
export type ButtonName = keyof typeof BUTTONS;
const WHEEL = { up: 4, down: 5, left: 6, right: 7 } as const;

/** Parsed press_key items (keysyms) held around the action, as hold_keys. */
export type HoldItems = readonly (readonly number[])[];

export type PointerAction =
  | { kind: "move"; to: Point; smooth: boolean; durationMs: number }
  | {
      kind: "click";
      at: Point;
      button: ButtonName;
      clickType: "click" | "down" | "up";
      clicks: number;
    }
  | {
      kind: "drag";
      path: readonly Point[];
      button: "left" | "middle" | "right";
      delayMs: number;
      smooth: boolean;
      durationMs: number;
      stepsPerSegment: number;
      stepDelayMs: number;
    }
  | { kind: "scroll"; at: Point; deltaX: number; deltaY: number };

/** Every point an action goes to, to check that it lies on the screen. */
export function pointsOf(action: PointerAction): readonly Point[] {
  switch (action.kind) {
    case "move":
      return [action.to];
    case "drag":
      return action.path;
    default:
      return [action.at];
  }
}

/** A random bend for a smooth curve: each control point up to a fifth of the distance off the line. */
export type BendSource = () => readonly [number, number];
export const randomBend: BendSource = () => [Math.random() * 2 - 1, Math.random() * 2 - 1];

/** Motions along a smooth curve, each after its wait. */
function smoothTo(planner: Planner, from: Point, to: Point, durationMs: number, bend: BendSource): void {
  let previous = 0;
  for (const point of bezierPath(from, to, durationMs, bend())) {
    planner.wait(point.atMs - previous);
    planner.motion(point.x, point.y);
    previous = point.atMs;
  }
}

/**
 * The steps of a mouse action, from the pointer's current position `from`. hold_keys go down after the
 * pointer reached the action's start and come up at its end. The button of a click_type "down" stays down.
 */
export function planPointer(
  map: KeyboardMap,
  bindings: SpareBindings,
  action: PointerAction,
  holdItems: HoldItems,
  from: Point,
  bend: BendSource = randomBend,
): InputStep[] {
  const planner = new Planner(map, bindings);
  const withKeys = (start: Point, work: () => void) => {
    planner.motion(start.x, start.y);
    const held = planner.pressAll(holdItems);
    work();
    planner.release(held);
  };
  switch (action.kind) {
    case "move": {
      const held = planner.pressAll(holdItems);
      if (action.smooth) {
        const duration = action.durationMs || durationForDistance(distance(from, action.to));
        smoothTo(planner, from, action.to, duration, bend);
      } else {
        planner.motion(action.to.x, action.to.y);
      }
      planner.release(held);
      break;
    }
    case "click": {
      const button = BUTTONS[action.button];
      withKeys(action.at, () => {
        if (action.clickType !== "up") planner.button(true, button);
        if (action.clickType === "down") return;
        if (action.clickType === "up") {
          planner.button(false, button);
          return;
        }
        planner.button(false, button);
        for (let click = 1; click < action.clicks; click++) {
          // Confirmed first: the server stamps events when it processes them, and a busy one could
          // otherwise process both clicks in the same millisecond.
          planner.hold(CLICK_INTERVAL_MS);
          planner.button(true, button);
          planner.button(false, button);
        }
      });
      break;
    }
    case "scroll":
      withKeys(action.at, () => {
        const wheel = (button: number, clicks: number) => {
          for (let click = 0; click < clicks; click++) {
            planner.button(true, button);
            planner.button(false, button);
          }
        };
        wheel(action.deltaY > 0 ? WHEEL.down : WHEEL.up, Math.abs(action.deltaY));
        wheel(action.deltaX > 0 ? WHEEL.right : WHEEL.left, Math.abs(action.deltaX));
      });
      break;
    case "drag": {
      const [start, ...rest] = action.path as [Point, ...Point[]];
      const button = BUTTONS[action.button];
      withKeys(start, () => {
        planner.button(true, button);
        planner.wait(action.delayMs);
        let previous = start;
        if (action.smooth) {
          const total = rest.reduce((sum, point, index) => sum + distance(action.path[index] as Point, point), 0);
          const duration = action.durationMs || durationForDistance(total);
          for (const point of rest) {
            const share = total === 0 ? duration / rest.length : (duration * distance(previous, point)) / total;
            smoothTo(planner, previous, point, Math.round(share), bend);
            previous = point;
          }
        } else {
          for (const point of rest) {
            for (const step of linearPath(previous, point, action.stepsPerSegment)) {
              planner.wait(action.stepDelayMs);
              planner.motion(step.x, step.y);
            }
            previous = point;
          }
        }
        planner.button(false, button);
      });
      break;
    }
  }
  return planner.steps;
}
