import type { Principal } from "../auth/api-keys.ts";
import { notFound } from "../errors.ts";
import type { BrowserSessionRecord } from "../store/browser-sessions.ts";
import type { Store } from "../store/store.ts";

/** The caller's active session by id or name; another organization's session is simply not found. */
export async function resolveSession(
  store: Store,
  principal: Principal,
  idOrName: string,
): Promise<BrowserSessionRecord> {
  const session = await store.browserSessions.findActive(principal.organizationId, idOrName);
  if (!session) throw notFound(`browser session "${idOrName}"`);
  return session;
}
