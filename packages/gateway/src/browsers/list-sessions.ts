import { z } from "zod";
import type { Principal } from "../auth/api-keys.ts";
import type { SessionStatusFilter } from "../store/browser-sessions.ts";
import type { Store } from "../store/store.ts";
import { type BrowserSession, toBrowserSession } from "./session-record.ts";

// The same page bounds as GET /proxies.
const DEFAULT_PAGE_SIZE = 20;
const MAX_PAGE_SIZE = 100;

function once() {
  return z.string({ error: "must be given once" });
}

function queryInteger(min: number, max: number, range: string) {
  return once()
    .regex(/^\d{1,15}$/, { error: range })
    .transform(Number)
    .pipe(z.number().min(min, { error: range }).max(max, { error: range }));
}

export const queryBoolean = once()
  .refine((value) => value === "true" || value === "false", { error: "must be true or false" })
  .transform((value) => value === "true");

const unsupported = z.never({ error: "not supported by this service" }).optional();

/** GET /browsers: offset pagination and the status filter of @onkernel/sdk's list params. */
export const BrowserListQuery = z.strictObject({
  limit: queryInteger(1, MAX_PAGE_SIZE, `must be a whole number from 1 to ${MAX_PAGE_SIZE}`).default(DEFAULT_PAGE_SIZE),
  offset: queryInteger(0, Number.MAX_SAFE_INTEGER, "must be a whole number, 0 or more").default(0),
  status: z.enum(["active", "deleted", "all"], { error: "must be one of active, deleted, all" }).optional(),
  /** Deprecated in the SDK in favour of status=all; still honoured. */
  include_deleted: queryBoolean.optional(),
  query: unsupported,
  tags: unsupported,
});
export type BrowserListQuery = z.output<typeof BrowserListQuery>;

export interface BrowserSessionPage {
  items: BrowserSession[];
  hasMore: boolean;
  /** Where the next page starts; 0 on the last page, which the official client reads as "stop". */
  nextOffset: number;
}

export async function listSessions(
  store: Store,
  principal: Principal,
  query: BrowserListQuery,
): Promise<BrowserSessionPage> {
  const status: SessionStatusFilter = query.status ?? (query.include_deleted ? "all" : "active");
  const { items, hasMore } = await store.browserSessions.list(principal.organizationId, {
    status,
    offset: query.offset,
    limit: query.limit,
  });
  return { items: items.map(toBrowserSession), hasMore, nextOffset: hasMore ? query.offset + items.length : 0 };
}
