export {
  DisplayUnavailableError,
  InvalidInputError,
  InvalidKeysError,
  PressCancelledError,
  PressInterruptedError,
  PressQueueFullError,
} from "./errors.ts";
export {
  type Keyboard,
  openKeyboard,
  type PointerRequest,
  type PressRequest,
  type TextRequest,
} from "./keyboard.ts";
export { NoSpareKeycodeError } from "./press-plan.ts";
