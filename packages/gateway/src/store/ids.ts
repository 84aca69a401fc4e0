import { randomBytes } from "node:crypto";

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** A random lowercase id like the public service's (24 characters, ~124 bits). */
export function newId(length = 24): string {
  const bytes = randomBytes(length * 2);
  let id = "";
  // Rejection sampling keeps every character equally likely.
  for (let i = 0; i < bytes.length && id.length < length; i++) {
    const byte = bytes[i] as number;
    if (byte < 252) id += ALPHABET[byte % 36];
  }
  return id.length === length ? id : newId(length);
}
