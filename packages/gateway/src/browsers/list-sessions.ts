import { z } from "zod";
import type { Principal } from "../auth/api-keys.ts";
import { type Page, pageOf, pageQuery, queryOnce } from "../http/pagination.ts";
import type { SessionStatusFilter } from "../store/browser-sessions.ts";
import type { Store } from "../store/store.ts";
import type { CdpUrls } from "./cdp/cdp-url.ts";
import { type BrowserSession, toBrowserSession } from "./session-record.ts";

export const queryBoolean = queryOnce()
  .refine((value) => value === "true" || value === "false", { error: "must be true or false" })
  .transform((value) => value === "true");

const unsupported = z.never({ error: "not supported by this service" }).optional();

/** GET /browsers: offset pagination and the status filter of @onkernel/sdk's list params. */
export const BrowserListQuery = z.strictObject({
  ...pageQuery,
  status: z.enum(["active", "deleted", "all"], { error: "must be one of active, deleted, all" }).optional(),
  /** Deprecated in the SDK in favour of status=all; still honoured. */
  include_deleted: queryBoolean.optional(),
  query: unsupported,
  tags: unsupported,
});
export type BrowserListQuery = z.output<typeof BrowserListQuery>;

export async function listSessions(
  { store, cdpUrls }: { store: Store; cdpUrls: CdpUrls },
  principal: Principal,
  query: BrowserListQuery,
): Promise<Page<BrowserSession>> {
  const status: SessionStatusFilter = query.status ?? (query.include_deleted ? "all" : "active");
  const rows = await store.browserSessions.list(principal.organizationId, {
    status,
    offset: query.offset,
    limit: query.limit,
  });
  return pageOf(rows, query.offset, (session) => toBrowserSession(session, cdpUrls));
}
