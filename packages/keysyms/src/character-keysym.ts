import { KEYSYM_TABLE } from "./keysym-table.ts";

const namedKeysymOfCodePoint = new Map<number, number>();
for (const [, keysym, codePoint] of KEYSYM_TABLE) {
  if (codePoint !== 0 && !namedKeysymOfCodePoint.has(codePoint)) namedKeysymOfCodePoint.set(codePoint, keysym);
}

// Characters a caller can type as text that stand for keys rather than for printable keysyms.
const controlCharacterKeysyms = new Map<number, number>([
  [0x09, 0xff09], // Tab
  [0x0a, 0xff0d], // Return
  [0x0d, 0xff0d], // Return
]);

const unicodeKeysymBase = 0x01000000;

/** The keysym of a Unicode code point by the X rule, or undefined for control characters X cannot type. */
export function keysymOfCodePoint(codePoint: number): number | undefined {
  const control = controlCharacterKeysyms.get(codePoint);
  if (control !== undefined) return control;
  if (codePoint < 0x20 || (codePoint >= 0x7f && codePoint < 0xa0)) return undefined;
  if (codePoint >= 0xd800 && codePoint <= 0xdfff) return undefined;
  if (codePoint <= 0xff) return codePoint;
  // Keyboard maps bind the named keysym (Greek_alpha, EuroSign), so a name found here is pressable where U+XXXX is not.
  return namedKeysymOfCodePoint.get(codePoint) ?? unicodeKeysymBase | codePoint;
}
