import { validateKeyItems } from "@browser-infra/keysyms";
import { z } from "zod";
import type { Principal } from "../auth/api-keys.ts";
import { invalidInput } from "../errors.ts";
import { hostCallError } from "../hosts/host-errors.ts";
import type { BrowserDeps } from "./file-info.ts";
import { useSession } from "./use-session.ts";

/**
 * Far more than any real key sequence, but bounded: zod checks the length before the items, so a
 * 1 MiB body of half a million bad items costs one issue, not half a million (260 MB and 0.4 s).
 */
export const MAX_KEYS = 10_000;

const keyList = z
  .array(z.string({ error: "must be a string" }), { error: "must be an array of strings" })
  .max(MAX_KEYS, { error: `must have at most ${MAX_KEYS} items` });

/** Spec 4.2; `maxDurationMs` comes from configuration. */
export function pressKeyBody(maxDurationMs: number) {
  return z.object(
    {
      keys: keyList.min(1, { error: "must contain at least one key" }),
      duration: z
        .number({ error: "must be a number of milliseconds" })
        .int({ error: "must be a whole number of milliseconds" })
        .min(0, { error: "must be at least 0" })
        .max(maxDurationMs, { error: `must be at most ${maxDurationMs}` })
        .optional(),
      hold_keys: keyList.optional(),
    },
    { error: (issue) => (issue.input === undefined ? "required" : "must be a JSON object") },
  );
}
export type PressKeyBody = z.infer<ReturnType<typeof pressKeyBody>>;

export interface PressKeyDeps extends BrowserDeps {
  maxPressDurationMs: number;
}

/**
 * Presses the keys on the session's host. Every key is checked before the
 * host is called, so a bad item means no key event at all. Once the call may
 * have reached the host, a failure is never marked retryable: a retry could
 * press the keys twice.
 */
export async function pressKey(
  deps: PressKeyDeps,
  principal: Principal,
  idOrName: string,
  body: PressKeyBody,
  requestId: string,
  signal?: AbortSignal,
): Promise<void> {
  const holdKeys = body.hold_keys ?? [];
  const problems = [...validateKeyItems("keys", body.keys), ...validateKeyItems("hold_keys", holdKeys)];
  if (problems.length > 0) throw invalidInput(problems);
  const session = await useSession(deps.store, principal, idOrName);
  const durationMs = body.duration ?? 0;
  try {
    await deps.hosts
      .client(session.hostAddress)
      .pressKey(
        { keys: body.keys, durationMs, holdKeys, sessionId: session.id },
        { timeoutMs: deps.agentTimeoutMs + durationMs, requestId, signal },
      );
  } catch (error) {
    throw hostCallError(error, session.hostAddress, true, session.id);
  }
}
