/** A part of a region on the screen, in pixels from the top-left corner. */
export interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface ScreenSize {
  width: number;
  height: number;
}

/** The region asked for is empty or not wholly inside the screen; nothing was captured. */
export class RegionOutsideScreenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RegionOutsideScreenError";
  }
}

/** There is no screen to capture: no X display and no browser, or the display cannot be reached. */
export class ScreenUnavailableError extends Error {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = "ScreenUnavailableError";
  }
}

/** Too many screenshots wait already; this one was not taken. */
export class CaptureQueueFullError extends Error {
  constructor(waiting: number) {
    super(`too many screenshots in progress on this host (${waiting} waiting); retry shortly`);
    this.name = "CaptureQueueFullError";
  }
}

/** Why a region does not fit the screen, or undefined when it does. */
export function regionProblem(region: Region, screen: ScreenSize): string | undefined {
  const { x, y, width, height } = region;
  if (width < 1 || height < 1) return `region: width and height must be at least 1, got ${width}×${height}`;
  if (x + width > screen.width || y + height > screen.height) {
    return (
      `region: ${width}×${height} at (${x}, ${y}) is not inside the screen (${screen.width}×${screen.height}): ` +
      `x + width must be at most ${screen.width} and y + height at most ${screen.height}`
    );
  }
  return undefined;
}
