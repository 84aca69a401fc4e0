import type { Principal } from "../auth/api-keys.ts";
import { notFound } from "../errors.ts";
import type { BrowserSessionRecord } from "../store/browser-sessions.ts";
import type { Store } from "../store/store.ts";
import { resolveSession } from "./resolve-session.ts";

/**
 * A deadline this close to the one a touch would set is left as it is: an agent calling many
 * times a second then costs one write a second, not one per call, and a session ends at most
 * this much before its timeout.
 */
const TOUCH_GRANULARITY_MS = 1_000;

function deadlineIsCurrent(session: BrowserSessionRecord, nowMs: number): boolean {
  if (session.idleDeadline === null) return false;
  const wanted = nowMs + session.timeoutSeconds * 1000;
  return Date.parse(session.idleDeadline) >= wanted - TOUCH_GRANULARITY_MS;
}

/**
 * The caller's active session for an operation on its host. The operation counts as activity:
 * the session's idle deadline moves to now + its timeout.
 */
export async function useSession(store: Store, principal: Principal, idOrName: string): Promise<BrowserSessionRecord> {
  const session = await resolveSession(store, principal, idOrName);
  const now = Date.now();
  if (deadlineIsCurrent(session, now)) return session;
  // False when the session ended (deleted, or idle) between the lookup and now.
  if (!(await store.browserSessions.touch(session, new Date(now).toISOString()))) {
    throw notFound(`browser session "${idOrName}"`);
  }
  return session;
}
