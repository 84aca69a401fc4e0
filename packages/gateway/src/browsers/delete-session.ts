import type { Principal } from "../auth/api-keys.ts";
import { notFound } from "../errors.ts";
import type { Store } from "../store/store.ts";
import { resolveSession } from "./resolve-session.ts";

/** Ends the session and frees its host for the next one. */
export async function deleteSession(store: Store, principal: Principal, idOrName: string): Promise<void> {
  const session = await resolveSession(store, principal, idOrName);
  // Another request or the idle reaper may have ended it since it was found.
  if (!(await store.browserSessions.markDeleted(principal.organizationId, session.id, new Date().toISOString()))) {
    throw notFound(`browser session "${idOrName}"`);
  }
}
