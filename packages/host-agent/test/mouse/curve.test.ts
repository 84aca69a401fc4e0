import { describe, expect, it } from "vitest";
import { bezierPath, linearPath, MOTION_INTERVAL_MS } from "../../src/mouse/curve.ts";

describe("bezierPath", () => {
  it("ends exactly at the target, at the duration, with times that only grow", () => {
    const path = bezierPath({ x: 10, y: 700 }, { x: 900, y: 40 }, 400, [0.8, -0.6]);
    expect(path.at(-1)).toEqual({ x: 900, y: 40, atMs: 400 });
    expect(path.length).toBeGreaterThan(400 / MOTION_INTERVAL_MS / 2);
    for (let index = 1; index < path.length; index++) {
      expect(path[index]?.atMs).toBeGreaterThan(path[index - 1]?.atMs ?? 0);
      expect(path[index]).not.toMatchObject({ x: path[index - 1]?.x, y: path[index - 1]?.y });
    }
  });

  it("eases: the middle of the movement covers more ground per step than its start", () => {
    const path = bezierPath({ x: 0, y: 0 }, { x: 1000, y: 0 }, 500, [0, 0]);
    const step = (index: number) => (path[index + 1]?.x ?? 0) - (path[index]?.x ?? 0);
    expect(step(Math.floor(path.length / 2))).toBeGreaterThan(step(0));
  });

  it("bends off the straight line", () => {
    const path = bezierPath({ x: 0, y: 0 }, { x: 1000, y: 0 }, 500, [1, 1]);
    expect(Math.max(...path.map((point) => Math.abs(point.y)))).toBeGreaterThan(50);
  });
});

describe("linearPath", () => {
  it("walks evenly from the start (excluded) to the end (included)", () => {
    expect(linearPath({ x: 0, y: 0 }, { x: 10, y: 20 }, 2)).toEqual([
      { x: 5, y: 10 },
      { x: 10, y: 20 },
    ]);
  });
});
