import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { ApiError } from "../errors.ts";
import type { ApiKeyRecord } from "../store/api-keys.ts";
import { newId } from "../store/ids.ts";
import type { Store } from "../store/store.ts";
import type { PrincipalCache } from "./principal-cache.ts";

const KEY_PREFIX = "sk_";
const SHOWN_PREFIX_LENGTH = 10;

/**
 * One of our keys inside any text: the prefix and 20 or more of the base64url characters after it
 * (a key has 43), so a key cut short or run into other text is found too. Never right after a
 * letter or digit, so words such as "task_…" are left alone.
 */
export const API_KEY_IN_TEXT = new RegExp(`(?<![A-Za-z0-9])${KEY_PREFIX}[\\w-]{20,}`, "g");

export interface Principal {
  organizationId: string;
  apiKeyId: string;
}

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** Creates a key for the organization; the key is returned once and only its hash is stored. */
export async function createApiKey(
  store: Store,
  organizationId: string,
  name: string,
): Promise<{ key: string; record: Omit<ApiKeyRecord, "revokedAt"> }> {
  await store.organizations.ensure(organizationId);
  const key = KEY_PREFIX + randomBytes(32).toString("base64url");
  const record = {
    id: newId(),
    organizationId,
    name,
    keyHash: hashApiKey(key),
    prefix: key.slice(0, SHOWN_PREFIX_LENGTH),
    createdAt: new Date().toISOString(),
  };
  await store.apiKeys.insert(record);
  return { key, record };
}

function unauthorized(message: string): ApiError {
  return new ApiError("unauthorized", message);
}

/**
 * Resolves an Authorization header to the organization whose active key it carries; with a cache,
 * a key seen before costs no store read until the store reports a revocation.
 */
export async function authenticate(
  store: Store,
  header: string | undefined,
  cache?: PrincipalCache,
): Promise<Principal> {
  if (!header) throw unauthorized("missing Authorization header; send Authorization: Bearer <api key>");
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  if (!match) {
    throw unauthorized(
      /^Bearer\s*$/i.test(header) ? "empty bearer token" : "Authorization header must be: Bearer <api key>",
    );
  }
  const presented = hashApiKey(match[1] as string);
  const version = cache && store.apiKeys.revocationVersion();
  const cached = cache?.get(presented, version);
  if (cached) return cached;
  const record = await store.apiKeys.findActiveByHash(presented);
  // The lookup is by hash, so timing reveals nothing about the key; the equality check is constant time anyway.
  if (!record || !timingSafeEqual(Buffer.from(record.keyHash), Buffer.from(presented))) {
    throw unauthorized("invalid or revoked API key");
  }
  const principal = { organizationId: record.organizationId, apiKeyId: record.id };
  cache?.set(presented, principal, version);
  return principal;
}
