import type { Principal } from "../auth/api-keys.ts";
import { notFound } from "../errors.ts";
import type { Store } from "../store/store.ts";
import { resolveSession } from "./resolve-session.ts";
import type { SessionLifecycle } from "./session-lifecycle.ts";

const DELETED_REASON = "deleted";

/**
 * Ends the session and stops its browser: answers once the host confirmed the stop (or could not
 * be reached, in which case the host stays out of the pool until it confirms).
 */
export async function deleteSession(
  deps: { store: Store; lifecycle: SessionLifecycle },
  principal: Principal,
  idOrName: string,
): Promise<void> {
  const session = await resolveSession(deps.store, principal, idOrName);
  // Another request or the idle reaper may have ended it since it was found.
  if (!(await deps.lifecycle.end(session.id, DELETED_REASON, principal.organizationId))) {
    throw notFound(`browser session "${idOrName}"`);
  }
}
