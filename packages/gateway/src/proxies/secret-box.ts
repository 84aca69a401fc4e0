import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const ALGORITHM = "aes-256-gcm";
const IV_BYTES = 12;
const TAG_BYTES = 16;
// A version prefix lets a later key or algorithm change tell old values apart.
const VERSION = "v1";

/**
 * Encrypts a secret with AES-256-GCM. `context` (e.g. "proxy:<id>:password") is
 * authenticated but not stored, so a sealed value copied to another row or
 * field no longer opens.
 */
export function sealSecret(key: Buffer, plaintext: string, context: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(context, "utf8"));
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [VERSION, iv.toString("base64"), Buffer.concat([ciphertext, cipher.getAuthTag()]).toString("base64")].join(
    ".",
  );
}

/** The plaintext of a sealed secret; throws when the key, the context or the value is not the one it was sealed with. */
export function openSecret(key: Buffer, sealed: string, context: string): string {
  const [version, iv, payload] = sealed.split(".");
  if (version !== VERSION || !iv || !payload) throw new Error("not a sealed secret");
  const bytes = Buffer.from(payload, "base64");
  const decipher = createDecipheriv(ALGORITHM, key, Buffer.from(iv, "base64"), { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(context, "utf8"));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString(
    "utf8",
  );
}
