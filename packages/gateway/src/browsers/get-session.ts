import { z } from "zod";
import type { Principal } from "../auth/api-keys.ts";
import { notFound } from "../errors.ts";
import type { Store } from "../store/store.ts";
import type { CdpUrls } from "./cdp/cdp-url.ts";
import { queryBoolean } from "./list-sessions.ts";
import { type BrowserSession, toBrowserSession } from "./session-record.ts";

/** GET /browsers/{id_or_name}: include_deleted also finds ended sessions. */
export const BrowserRetrieveQuery = z.strictObject({ include_deleted: queryBoolean.optional() });
export type BrowserRetrieveQuery = z.output<typeof BrowserRetrieveQuery>;

export async function getSession(
  { store, cdpUrls }: { store: Store; cdpUrls: CdpUrls },
  principal: Principal,
  idOrName: string,
  query: BrowserRetrieveQuery,
): Promise<BrowserSession> {
  const session = await store.browserSessions.find(principal.organizationId, idOrName, query.include_deleted ?? false);
  if (!session) throw notFound(`browser session "${idOrName}"`);
  return toBrowserSession(session, cdpUrls);
}
