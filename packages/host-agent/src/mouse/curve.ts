export interface Point {
  x: number;
  y: number;
}

/** One position of a movement and when to reach it, in milliseconds from the movement's start. */
export interface TimedPoint extends Point {
  atMs: number;
}

/** How often a smooth movement reports a position: about a 100 Hz mouse. */
export const MOTION_INTERVAL_MS = 10;

export function distance(from: Point, to: Point): number {
  return Math.hypot(to.x - from.x, to.y - from.y);
}

/** Slow start, fast middle, slow stop, as a hand moves. */
function easeInOutCubic(t: number): number {
  return t < 0.5 ? 4 * t * t * t : 1 - (-2 * t + 2) ** 3 / 2;
}

/**
 * A human-like path from one point to another: a cubic Bézier curve whose control points sit off the
 * straight line by up to a fifth of its length (`bend` in [-1, 1] picks how far and to which side), walked
 * with eased timing, one point every MOTION_INTERVAL_MS. Whole pixels; the last point is exactly `to`,
 * and repeated pixels are left out.
 */
export function bezierPath(from: Point, to: Point, durationMs: number, bend: readonly [number, number]): TimedPoint[] {
  const length = distance(from, to);
  if (length === 0) return [{ ...to, atMs: 0 }];
  const normal = { x: -(to.y - from.y) / length, y: (to.x - from.x) / length };
  const control = (along: number, offset: number): Point => ({
    x: from.x + (to.x - from.x) * along + normal.x * offset * length * 0.2,
    y: from.y + (to.y - from.y) * along + normal.y * offset * length * 0.2,
  });
  const c1 = control(1 / 3, bend[0]);
  const c2 = control(2 / 3, bend[1]);
  const steps = Math.max(1, Math.ceil(durationMs / MOTION_INTERVAL_MS));
  const points: TimedPoint[] = [];
  for (let step = 1; step <= steps; step++) {
    const t = easeInOutCubic(step / steps);
    const u = 1 - t;
    const point =
      step === steps
        ? to
        : {
            x: Math.round(u * u * u * from.x + 3 * u * u * t * c1.x + 3 * u * t * t * c2.x + t * t * t * to.x),
            y: Math.round(u * u * u * from.y + 3 * u * u * t * c1.y + 3 * u * t * t * c2.y + t * t * t * to.y),
          };
    const last = points.at(-1);
    const atMs = Math.round((durationMs * step) / steps);
    if (last && last.x === point.x && last.y === point.y) last.atMs = atMs;
    else points.push({ x: point.x, y: point.y, atMs });
  }
  return points;
}

/** `steps` evenly spaced whole-pixel points from `from` (excluded) to `to` (included). */
export function linearPath(from: Point, to: Point, steps: number): Point[] {
  return Array.from({ length: steps }, (_, index) => {
    const t = (index + 1) / steps;
    return { x: Math.round(from.x + (to.x - from.x) * t), y: Math.round(from.y + (to.y - from.y) * t) };
  });
}
