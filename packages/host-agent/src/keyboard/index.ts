export {
  DisplayUnavailableError,
  InvalidKeysError,
  PressCancelledError,
  PressInterruptedError,
  PressQueueFullError,
} from "./errors.ts";
export { type Keyboard, openKeyboard, type PressRequest } from "./keyboard.ts";
export { NoSpareKeycodeError } from "./press-plan.ts";
