import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";

/** What a CDP token grants: one DevTools attachment to one session of one organization, until it expires. */
export interface CdpGrant {
  sessionId: string;
  organizationId: string;
  /** Unix time in seconds. */
  expiresAt: number;
}

export type CdpTokenCheck = { grant: CdpGrant } | { refused: "malformed" | "expired" };

/** Binds the derived key to this one use: the same SECRETS_KEY also seals proxy secrets. */
const KEY_INFO = "browser-infra: CDP URL token, v1";

const TOKEN = /^([A-Za-z0-9_-]{1,1024})\.([A-Za-z0-9_-]{43})$/;

function isGrant(value: unknown): value is { s: string; o: string; e: number } {
  const candidate = value as { s?: unknown; o?: unknown; e?: unknown } | null;
  return typeof candidate?.s === "string" && typeof candidate.o === "string" && Number.isSafeInteger(candidate.e);
}

/**
 * Signs and checks the tokens in session CDP URLs: `<payload>.<HMAC-SHA256 of it>`, both
 * base64url, the payload naming the session, its organization and the expiry. The key is derived
 * from SECRETS_KEY, which every replica shares, so any replica accepts a URL another handed out.
 * A token is no API key: it opens the session's DevTools socket and nothing else.
 */
export class CdpTokens {
  readonly #key: Buffer;
  readonly #ttlSeconds: number;

  constructor(secretsKey: Buffer, ttlSeconds: number) {
    this.#key = Buffer.from(hkdfSync("sha256", secretsKey, Buffer.alloc(0), KEY_INFO, 32));
    this.#ttlSeconds = ttlSeconds;
  }

  #sign(payload: string): string {
    return createHmac("sha256", this.#key).update(payload).digest("base64url");
  }

  issue(sessionId: string, organizationId: string, nowMs = Date.now()): string {
    const expiresAt = Math.floor(nowMs / 1000) + this.#ttlSeconds;
    const payload = Buffer.from(JSON.stringify({ s: sessionId, o: organizationId, e: expiresAt })).toString(
      "base64url",
    );
    return `${payload}.${this.#sign(payload)}`;
  }

  /** The grant a token carries; refused when it is not one this key signed, or has expired. */
  check(token: string, nowMs = Date.now()): CdpTokenCheck {
    const [, payload = "", signature = ""] = TOKEN.exec(token) ?? [];
    if (!payload) return { refused: "malformed" };
    const expected = Buffer.from(this.#sign(payload));
    if (!timingSafeEqual(expected, Buffer.from(signature))) return { refused: "malformed" };
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    } catch {
      return { refused: "malformed" };
    }
    if (!isGrant(decoded)) return { refused: "malformed" };
    if (decoded.e * 1000 <= nowMs) return { refused: "expired" };
    return { grant: { sessionId: decoded.s, organizationId: decoded.o, expiresAt: decoded.e } };
  }
}
