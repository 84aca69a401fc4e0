export { keysymOfCodePoint } from "./character-keysym.ts";
export {
  CLICK_INTERVAL_MS,
  DEFAULT_STEP_DELAY_MS,
  DEFAULT_STEPS_PER_SEGMENT,
  durationForDistance,
  INPUT_LIMITS,
  type PlannedInput,
  plannedDurationMs,
  textSettleAllowanceMs,
} from "./input-limits.ts";
export { type KeyItemParse, parseKeyItem, validateKeyItems } from "./key-item.ts";
export { keysymFromName, keysymName } from "./keysym-names.ts";
export { isModifierKeysym } from "./modifier-keysym.ts";
export { type TextKeysymsParse, textKeysyms } from "./text-keysyms.ts";
