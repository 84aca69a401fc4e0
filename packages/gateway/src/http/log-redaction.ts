import { API_KEY_IN_TEXT } from "../auth/api-keys.ts";

// What pino's own redaction writes too (logger.ts).
const REDACTED = "[redacted]";

/**
 * Query parameter names that say their value is a secret, matched in lower case with everything
 * but letters and digits removed: token, access_token, api_key, X-Api-Key, password, client_secret,
 * Authorization, oauth_signature, sig… The API itself takes none of them in a query string.
 */
const SECRET_NAME = /token|key|passw(or)?d|pwd|secret|auth|credential|signature|^sig$|jwt|bearer|session|cookie/;

function decoded(part: string): string {
  try {
    return decodeURIComponent(part.replaceAll("+", " "));
  } catch {
    return part;
  }
}

function isSecretName(name: string): boolean {
  return SECRET_NAME.test(
    decoded(name)
      .toLowerCase()
      .replace(/[^a-z0-9]/g, ""),
  );
}

/** The text with anything shaped like one of our API keys replaced by [redacted]. */
export function maskApiKeys(text: string): string {
  return text.replace(API_KEY_IN_TEXT, REDACTED);
}

function hasApiKey(text: string): boolean {
  return text.search(API_KEY_IN_TEXT) !== -1;
}

function loggedParam(param: string): string {
  const equals = param.indexOf("=");
  if (equals === -1) return maskApiKeys(param);
  const name = param.slice(0, equals);
  const value = param.slice(equals + 1);
  // A key percent-encoded in a value is a key too.
  const secret = isSecretName(name) || hasApiKey(decoded(value));
  return secret ? `${maskApiKeys(name)}=${REDACTED}` : maskApiKeys(param);
}

/**
 * A request URL as a log line shows it: the value of each query parameter whose name says it is a
 * secret, and anything shaped like one of our API keys anywhere in the URL, as [redacted]. A
 * client that puts its key or a token in a URL by mistake must not find it in the operator's
 * logs. The rest is left exactly as sent, so a line still shows what was asked.
 */
export function loggedUrl(url: string): string {
  const queryAt = url.indexOf("?");
  if (queryAt === -1) return maskApiKeys(url);
  const query = url
    .slice(queryAt + 1)
    .split("&")
    .map(loggedParam)
    .join("&");
  return `${maskApiKeys(url.slice(0, queryAt))}?${query}`;
}
