import type { PressKeyRequest } from "@browser-infra/contract";
import { parseKeyItem } from "@browser-infra/keysyms";
import { Counter } from "prom-client";
import { registry } from "./registry.ts";

const keyEvents = new Counter({
  name: "hostagent_key_events_total",
  help: "Key events (each press and each release) sent to the X server by successful press_key calls",
  registers: [registry],
});

/** Every key of every item and hold key goes down once and up once. */
export function keyEventsOf(request: Pick<PressKeyRequest, "keys" | "holdKeys">): number {
  let keys = 0;
  for (const item of [...request.holdKeys, ...request.keys]) {
    const parsed = parseKeyItem(item);
    if (parsed.ok) keys += parsed.keysyms.length;
  }
  return keys * 2;
}

/**
 * Counts the key events of each press_key call that succeeded, from its
 * request, so the keyboard code needs no knowledge of metrics.
 */
export function countingKeyEvents<R extends Pick<PressKeyRequest, "keys" | "holdKeys">, A extends unknown[], T>(
  handler: (request: R, ...rest: A) => Promise<T>,
): (request: R, ...rest: A) => Promise<T> {
  return async (request, ...rest) => {
    const result = await handler(request, ...rest);
    keyEvents.inc(keyEventsOf(request));
    return result;
  };
}
