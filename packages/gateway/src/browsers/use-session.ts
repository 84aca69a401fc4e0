import type { Principal } from "../auth/api-keys.ts";
import { notFound } from "../errors.ts";
import type { BrowserSessionRecord } from "../store/browser-sessions.ts";
import type { Store } from "../store/store.ts";
import { resolveSession } from "./resolve-session.ts";

/**
 * The caller's active session for an operation on its host. The operation counts as activity:
 * the session's idle deadline moves to now + its timeout.
 */
export async function useSession(store: Store, principal: Principal, idOrName: string): Promise<BrowserSessionRecord> {
  const session = await resolveSession(store, principal, idOrName);
  // False when the session ended (deleted, or idle) between the lookup and now.
  if (!(await store.browserSessions.touch(session, new Date().toISOString()))) {
    throw notFound(`browser session "${idOrName}"`);
  }
  return session;
}
