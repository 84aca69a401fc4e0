import { describe, expect, it } from "vitest";
import { KeyboardMap } from "../../src/keyboard/keyboard-map.ts";
import type { InputStep } from "../../src/keyboard/press-plan.ts";
import { SpareBindings } from "../../src/keyboard/spare-bindings.ts";
import { planText } from "../../src/keyboard/text-plan.ts";

// Keycode 8 Shift_L, 9 a/A, 10 Caps_Lock (the Lock modifier), then three spare keycodes 11-13.
const SHIFT = 8;
const A = 9;
const CAPS = 10;
const map = new KeyboardMap(
  8,
  [
    [0xffe1, 0],
    [0x61, 0x41],
    [0xffe5, 0],
    [0, 0],
    [0, 0],
    [0, 0],
  ],
  [[SHIFT], [CAPS], [], [], [], [], [], []],
);
const [X, Y, Z, W] = [0x1004e00, 0x1004e01, 0x1004e02, 0x1004e03];

function describeSteps(steps: InputStep[]): string[] {
  return steps.map((step) => {
    if (step.kind === "bind") return `bind ${step.keycode} ${step.row.map((k) => k.toString(16)).join("/")}`;
    if (step.kind === "down" || step.kind === "up") return `${step.kind} ${step.keycode}`;
    return step.kind === "wait" ? `wait ${step.ms}` : step.kind;
  });
}

const plan = (keysyms: number[], options: { delayMs?: number; capsLockOn?: boolean } = {}, bindings?: SpareBindings) =>
  describeSteps(
    planText(map, { keysyms, delayMs: options.delayMs ?? 0, capsLockOn: options.capsLockOn ?? false }, bindings),
  );

describe("planText", () => {
  it("binds every missing character of a batch first, two to a keycode, and types the second with Shift", () => {
    expect(plan([0x61, X, Y, X])).toEqual([
      `bind 13 ${X.toString(16)}/${Y.toString(16)}`,
      `down ${A}`,
      `up ${A}`,
      "down 13",
      "up 13",
      `down ${SHIFT}`,
      "down 13",
      "up 13",
      `up ${SHIFT}`,
      "down 13",
      "up 13",
    ]);
  });

  it("reuses what an earlier call left bound, without binding again", () => {
    const bindings = new SpareBindings();
    bindings.set(12, { row: [Y, X], boundAt: 0 });
    expect(plan([X], {}, bindings)).toEqual([`down ${SHIFT}`, "down 12", "up 12", `up ${SHIFT}`]);
  });

  it("starts another batch when the spare keycodes are full, replacing bindings the text ahead no longer needs", () => {
    const keysyms = [X, Y, Z, W, 0x1004e04, 0x1004e05, 0x1004e06];
    const steps = plan(keysyms);
    expect(steps.filter((step) => step.startsWith("bind"))).toEqual([
      "bind 13 1004e00/1004e01",
      "bind 12 1004e02/1004e03",
      "bind 11 1004e04/1004e05",
      "bind 13 1004e06/1004e06",
    ]);
    expect(steps.indexOf("bind 13 1004e06/1004e06")).toBeGreaterThan(steps.lastIndexOf("down 11"));
  });

  it("waits the delay between characters, not after the last", () => {
    expect(plan([0x61, 0x61], { delayMs: 30 })).toEqual([`down ${A}`, `up ${A}`, "wait 30", `down ${A}`, `up ${A}`]);
  });

  it("turns Caps Lock off around the text when it is on, so letters keep their case", () => {
    expect(plan([0x41], { capsLockOn: true })).toEqual([
      `down ${CAPS}`,
      `up ${CAPS}`,
      `down ${SHIFT}`,
      `down ${A}`,
      `up ${A}`,
      `up ${SHIFT}`,
      `down ${CAPS}`,
      `up ${CAPS}`,
    ]);
  });
});
