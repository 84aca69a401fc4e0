/** Metadata key that carries the HTTP request id to the host agent's logs. */
export const REQUEST_ID_KEY = "x-request-id";

/**
 * The one shape of request id the gateway and the host agent carry and log as one: 1 to 64
 * letters, digits, '.', ':' and '-', starting with a letter or digit. UUIDs, trace ids and W3C
 * traceparent values fit; an API key (sk_…) never does, so no caller can make one travel as an id.
 */
const REQUEST_ID_SHAPE = /^[A-Za-z0-9][A-Za-z0-9.:-]{0,63}$/;

/** How much of a refused request id a log line keeps beside the id generated instead. */
const LOGGED_CALLER_ID_LENGTH = 128;

/** The id the caller sent, when it has the shape. */
export function keptRequestId(sent: unknown): string | undefined {
  return typeof sent === "string" && REQUEST_ID_SHAPE.test(sent) ? sent : undefined;
}

/**
 * What the caller sent as its request id when that was not kept, cut to LOGGED_CALLER_ID_LENGTH:
 * logged beside the generated id so the caller's trace can still be found, never carried further.
 */
export function refusedRequestId(sent: unknown): string | undefined {
  if (sent === undefined || sent === "" || keptRequestId(sent) !== undefined) return undefined;
  return String(sent).slice(0, LOGGED_CALLER_ID_LENGTH);
}
