import { keysymOfCodePoint } from "./character-keysym.ts";
import { keysymFromName } from "./keysym-names.ts";

export type KeyItemParse = { ok: true; keysyms: number[] } | { ok: false; reason: string };

// The names people type for modifiers, which X spells per side (xdotool's aliases, plus cmd for Mac habits).
const aliases = new Map<string, number>([
  ["ctrl", 0xffe3], // Control_L
  ["control", 0xffe3],
  ["shift", 0xffe1], // Shift_L
  ["alt", 0xffe9], // Alt_L
  ["meta", 0xffe7], // Meta_L
  ["super", 0xffeb], // Super_L
  ["cmd", 0xffeb],
]);

// XStringToKeysym also accepts "U263A" (a Unicode character) and "0x1008ff14" (a raw keysym).
const unicodeForm = /^U([0-9a-fA-F]{4,6})$/;
const hexForm = /^0[xX]([0-9a-fA-F]{1,8})$/;
const largestKeysym = 0x1fffffff;

function keysymOfSingleCharacter(text: string): number | undefined {
  const codePoint = text.codePointAt(0);
  if (codePoint === undefined || String.fromCodePoint(codePoint) !== text) return undefined;
  return keysymOfCodePoint(codePoint);
}

function keysymOfKey(key: string): number | undefined {
  const character = keysymOfSingleCharacter(key);
  if (character !== undefined) return character;
  const alias = aliases.get(key.toLowerCase());
  if (alias !== undefined) return alias;
  const unicode = unicodeForm.exec(key);
  if (unicode) {
    const codePoint = Number.parseInt(unicode[1] as string, 16);
    return codePoint <= 0x10ffff ? keysymOfCodePoint(codePoint) : undefined;
  }
  const hex = hexForm.exec(key);
  if (hex) {
    const keysym = Number.parseInt(hex[1] as string, 16);
    return keysym > 0 && keysym <= largestKeysym ? keysym : undefined;
  }
  return keysymFromName(key);
}

// "Ctrl + Shift + Tab" → ["Ctrl", "Shift", "Tab"]; a trailing "++" is the plus key ("ctrl++" → ["ctrl", "+"]).
function splitCombination(item: string): string[] {
  const parts = item.split("+").map((part) => part.trim());
  if (parts.length >= 3 && parts.at(-1) === "" && parts.at(-2) === "") return [...parts.slice(0, -2), "+"];
  return parts;
}

/** Parses one press_key item: a keysym name, a single character, or a "+"-joined combination, into keysyms in press order. */
export function parseKeyItem(item: string): KeyItemParse {
  // A lone character is the key itself, even " " or "+", which the combination syntax would otherwise eat.
  const whole = keysymOfSingleCharacter(item) ?? keysymOfSingleCharacter(item.trim());
  if (whole !== undefined) return { ok: true, keysyms: [whole] };
  if (item.trim() === "") return { ok: false, reason: `empty key ${JSON.stringify(item)}` };

  const parts = splitCombination(item);
  if (parts.includes("")) return { ok: false, reason: `empty key name in ${JSON.stringify(item)}` };

  const keysyms: number[] = [];
  const unknown: string[] = [];
  for (const part of parts) {
    const keysym = keysymOfKey(part);
    if (keysym === undefined) unknown.push(JSON.stringify(part));
    else keysyms.push(keysym);
  }
  if (unknown.length === 0) return { ok: true, keysyms };
  const what = unknown.length === 1 ? `unknown key ${unknown[0]}` : `unknown keys ${unknown.join(", ")}`;
  return { ok: false, reason: parts.length === 1 ? what : `${what} in ${JSON.stringify(item)}` };
}

/** One message per item that does not parse, such as `keys[2]: unknown key "Foo"`; empty when all are valid. */
export function validateKeyItems(field: string, items: readonly string[]): string[] {
  const problems: string[] = [];
  items.forEach((item, index) => {
    const parsed = parseKeyItem(item);
    if (!parsed.ok) problems.push(`${field}[${index}]: ${parsed.reason}`);
  });
  return problems;
}
