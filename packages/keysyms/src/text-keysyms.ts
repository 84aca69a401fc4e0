import { keysymOfCodePoint } from "./character-keysym.ts";

export type TextKeysymsParse = { ok: true; keysyms: number[] } | { ok: false; problems: string[] };

/** Problems reported for one text, at most: the first few say what is wrong. */
const MAX_PROBLEMS = 20;

/**
 * The keysym of every character of a text, in order: one per code point (a combining mark, an emoji, a
 * right-to-left letter each are one), newline and carriage return as Return (CR LF as one), tab as Tab.
 * Other control characters and lone surrogates cannot be typed, and are reported by position.
 */
export function textKeysyms(field: string, text: string): TextKeysymsParse {
  const keysyms: number[] = [];
  const problems: string[] = [];
  let index = 0;
  let previous: number | undefined;
  for (const character of text) {
    const codePoint = character.codePointAt(0) as number;
    const crLf = previous === 0x0d && codePoint === 0x0a;
    previous = codePoint;
    index++;
    if (crLf) continue;
    const keysym = keysymOfCodePoint(codePoint);
    if (keysym !== undefined) keysyms.push(keysym);
    else if (problems.length < MAX_PROBLEMS) {
      const code = codePoint.toString(16).toUpperCase().padStart(4, "0");
      problems.push(`${field}: character ${index} (U+${code}) cannot be typed`);
    }
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, keysyms };
}
