import { describe, expect, it } from "vitest";
import { KeyboardMap } from "../../src/keyboard/keyboard-map.ts";
import { NoSpareKeycodeError, planPress } from "../../src/keyboard/press-plan.ts";

// A tiny map from keycode 8: Shift_L, a/A, Control_L, Alt_L/Meta_L, then two empty (spare) keycodes.
const SHIFT = 8;
const A = 9;
const CONTROL = 10;
const ALT = 11;
const map = new KeyboardMap(
  8,
  [
    [0xffe1, 0],
    [0x61, 0x41],
    [0xffe3, 0],
    [0xffe9, 0xffe7],
    [0, 0],
    [0, 0],
  ],
  [[SHIFT], [], [CONTROL], [ALT], [], [], [], []],
);

function steps(items: number[][], durationMs = 0, holdItems: number[][] = []): string[] {
  return planPress(map, { items, holdItems, durationMs }).map((step) =>
    step.kind === "bind"
      ? `bind ${step.keycode} ${step.row.map((keysym) => keysym.toString(16)).join("/")}`
      : `${step.kind} ${"keycode" in step ? step.keycode : ""}`.trim(),
  );
}

describe("planPress", () => {
  it("adds Shift for a keysym on the shifted level", () => {
    expect(steps([[0x41]])).toEqual([`down ${SHIFT}`, `down ${A}`, `up ${A}`, `up ${SHIFT}`]);
  });

  it("does not add Shift when a Shift key is already held", () => {
    expect(steps([[0x41]], 0, [[0xffe1]])).toEqual([`down ${SHIFT}`, `down ${A}`, `up ${A}`, `up ${SHIFT}`]);
  });

  it("presses a modifier found on the shifted level without Shift", () => {
    expect(steps([[0xffe7]])).toEqual([`down ${ALT}`, `up ${ALT}`]);
  });

  it("binds a keysym the map lacks to the highest spare keycode, on both levels", () => {
    expect(steps([[0x100263a]])).toEqual(["bind 13 100263a/100263a", "down 13", "up 13"]);
  });

  it("rebinds the oldest spare keycode once all are used (the executor waits out its settle time)", () => {
    expect(steps([[0x1004e00], [0x1004e01], [0x1004e02]])).toEqual([
      "bind 13 1004e00/1004e00",
      "down 13",
      "up 13",
      "bind 12 1004e01/1004e01",
      "down 12",
      "up 12",
      "bind 13 1004e02/1004e02",
      "down 13",
      "up 13",
    ]);
  });

  it("refuses to hold more unmapped keys at once than there are spare keycodes", () => {
    expect(() => steps([[0x1004e00], [0x1004e01], [0x1004e02]], 100)).toThrow(NoSpareKeycodeError);
  });

  it("holds every key of every item, then releases in reverse", () => {
    expect(steps([[0xffe3, 0x61], [0x41]], 100)).toEqual([
      `down ${CONTROL}`,
      `down ${A}`,
      `down ${SHIFT}`,
      "hold",
      `up ${SHIFT}`,
      `up ${A}`,
      `up ${CONTROL}`,
    ]);
  });
});
