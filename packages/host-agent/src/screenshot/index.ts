export { CaptureQueueFullError, type Region, RegionOutsideScreenError, ScreenUnavailableError } from "./errors.ts";
export { type Screenshot, Screenshots } from "./screenshots.ts";
