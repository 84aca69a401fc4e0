import { KEYSYM_TABLE } from "./keysym-table.ts";

const byName = new Map<string, number>();
const byLowerCaseName = new Map<string, number>();
const preferredName = new Map<number, string>();

for (const [name, keysym] of KEYSYM_TABLE) {
  byName.set(name, keysym);
  // First in header order wins, so "AGRAVE" means Agrave and "eth" means ETH's first spelling, not a later alias.
  if (!byLowerCaseName.has(name.toLowerCase())) byLowerCaseName.set(name.toLowerCase(), keysym);
  if (!preferredName.has(keysym)) preferredName.set(keysym, name);
}

/** The keysym a name denotes: the exact name first, then ignoring case (as xdotool accepts "return" or "f5"). */
export function keysymFromName(name: string): number | undefined {
  return byName.get(name) ?? byLowerCaseName.get(name.toLowerCase());
}

/** The preferred name of a keysym, or undefined when keysymdef.h and XF86keysym.h name it nowhere. */
export function keysymName(keysym: number): string | undefined {
  return preferredName.get(keysym);
}
