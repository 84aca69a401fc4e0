export { keysymOfCodePoint } from "./character-keysym.ts";
export { type KeyItemParse, parseKeyItem, validateKeyItems } from "./key-item.ts";
export { keysymFromName, keysymName } from "./keysym-names.ts";
export { isModifierKeysym } from "./modifier-keysym.ts";
