import type { Response } from "express";
import { z } from "zod";

/** Offset pagination shared by every list operation, as the official client pages. */
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** A query parameter given exactly once: a repeated one arrives as an array and is refused. */
export function queryOnce() {
  return z.string({ error: "must be given once" });
}

function queryInteger(min: number, max: number, range: string) {
  return queryOnce()
    .regex(/^\d{1,15}$/, { error: range })
    .transform(Number)
    .pipe(z.number().min(min, { error: range }).max(max, { error: range }));
}

/** Spread into a list operation's query schema. */
export const pageQuery = {
  limit: queryInteger(1, MAX_PAGE_SIZE, `must be a whole number from 1 to ${MAX_PAGE_SIZE}`).default(DEFAULT_PAGE_SIZE),
  offset: queryInteger(0, Number.MAX_SAFE_INTEGER, "must be a whole number, 0 or more").default(0),
};

export interface Page<T> {
  items: T[];
  hasMore: boolean;
  /** Where the next page starts; 0 on the last page, which the official client reads as "stop". */
  nextOffset: number;
}

/** Builds the page a store returned for a request at `offset`. */
export function pageOf<Row, T>(
  rows: { items: Row[]; hasMore: boolean },
  offset: number,
  map: (row: Row) => T,
): Page<T> {
  return {
    items: rows.items.map(map),
    hasMore: rows.hasMore,
    nextOffset: rows.hasMore ? offset + rows.items.length : 0,
  };
}

/** How the OpenAPI document describes the paging headers. */
export const PAGE_HEADERS = {
  "x-has-more": "true when another page follows",
  "x-next-offset": "offset of the next page; 0 on the last page",
};

export function sendPage<T>(res: Response, page: Page<T>): void {
  res.setHeader("x-has-more", String(page.hasMore)).setHeader("x-next-offset", String(page.nextOffset));
  res.json(page.items);
}
