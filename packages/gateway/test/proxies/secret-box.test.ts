import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { openSecret, sealSecret } from "../../src/proxies/secret-box.ts";

const KEY = randomBytes(32);
const CONTEXT = "proxy:abc:password";

describe("sealSecret and openSecret", () => {
  it("open what was sealed with the same key and context", () => {
    expect(openSecret(KEY, sealSecret(KEY, "hunter22", CONTEXT), CONTEXT)).toBe("hunter22");
  });

  it("keep non-ASCII text intact", () => {
    const secret = "pässwörd-密码-🔑";
    expect(openSecret(KEY, sealSecret(KEY, secret, CONTEXT), CONTEXT)).toBe(secret);
  });

  it("never contain the plaintext", () => {
    const sealed = sealSecret(KEY, "plain-secret-value", CONTEXT);
    expect(sealed).not.toContain("plain-secret-value");
    expect(Buffer.from(sealed.split(".")[2] ?? "", "base64").toString("latin1")).not.toContain("plain-secret-value");
  });

  it("seal the same secret differently every time", () => {
    expect(sealSecret(KEY, "same", CONTEXT)).not.toBe(sealSecret(KEY, "same", CONTEXT));
  });

  it("refuse to open with another key", () => {
    const sealed = sealSecret(KEY, "secret", CONTEXT);
    expect(() => openSecret(randomBytes(32), sealed, CONTEXT)).toThrow();
  });

  it("refuse to open a value sealed for another proxy or field", () => {
    const sealed = sealSecret(KEY, "secret", CONTEXT);
    expect(() => openSecret(KEY, sealed, "proxy:other:password")).toThrow();
    expect(() => openSecret(KEY, sealed, "proxy:abc:ca_bundle")).toThrow();
  });

  it("refuse to open a tampered value", () => {
    const [version, iv, payload] = sealSecret(KEY, "secret", CONTEXT).split(".");
    const bytes = Buffer.from(payload ?? "", "base64");
    bytes[0] = (bytes[0] ?? 0) ^ 1;
    expect(() => openSecret(KEY, [version, iv, bytes.toString("base64")].join("."), CONTEXT)).toThrow();
  });

  it("refuse something that is not a sealed value", () => {
    expect(() => openSecret(KEY, "hunter22", CONTEXT)).toThrow("not a sealed secret");
  });
});
