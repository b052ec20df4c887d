// Paging a list that would otherwise answer with everything a person ever
// stored. The spec's list methods (notes/list is "every note") take no limit,
// so their callers never send one: they keep getting a plain array, as
// before, of at most PAGE_CAP records. A caller that sends `limit` or `cursor`
// gets pages instead, `{items, cursor}`, the cursor there while more follow.
//
// Pages are read by key (after the last record's sort key, never by offset),
// so each costs what it returns however long the list, and records added or
// removed between pages neither repeat nor push others out of the next one.
// The cursor is that key, opaque to callers: base64url of a JSON array.
import { Type as T } from "@sinclair/typebox";
import { invalid } from "./errors.ts";

/** The most records one answer holds: a caller without `limit` gets at most this many, and no limit may ask for more. */
export const PAGE_CAP = 1000;

/** The optional arguments a paged list adds to its own. */
export const pageArgs = {
  limit: T.Optional(T.Integer({ minimum: 1, maximum: PAGE_CAP, description: `At most this many, 1-${PAGE_CAP}; the answer is then a page, {items, cursor}.` })),
  cursor: T.Optional(T.String({ minLength: 1, maxLength: 4000, description: "The cursor a previous page answered with, for the page after it." })),
};

/** What a key's parts may be: each position of a list's cursor holds one of these. */
export type KeyPart = "string" | "number" | "number?";

export interface Page {
  /** Rows to read: one more than the page holds, to know whether another follows. */
  read: number;
  limit: number;
  /** The key the page starts after, or null for the first page. */
  after: unknown[] | null;
  /** Whether the caller asked for pages (sent limit or cursor): the answer is then {items, cursor}. */
  paged: boolean;
}

/** A list call's page, from its `limit` and `cursor` arguments; a cursor that is not one of this list's is a 400 naming it. */
export function pageOf(args: { limit?: number; cursor?: string }, key: readonly KeyPart[]): Page {
  const limit = args.limit ?? PAGE_CAP;
  const paged = args.limit !== undefined || args.cursor !== undefined;
  const after = args.cursor === undefined ? null : decodeCursor(args.cursor, key);
  return { read: limit + 1, limit, after, paged };
}

export function encodeCursor(key: unknown[]): string {
  return Buffer.from(JSON.stringify(key)).toString("base64url");
}

function decodeCursor(cursor: string, key: readonly KeyPart[]): unknown[] {
  const refuse = () => invalid("cursor", "cursor is not one this list answered with: pass the cursor of the page before, as it was given");
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw refuse();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw refuse();
  }
  if (!Array.isArray(parsed) || parsed.length !== key.length) throw refuse();
  for (const [i, kind] of key.entries()) {
    const v = parsed[i];
    const ok = kind === "string" ? typeof v === "string" : typeof v === "number" ? Number.isFinite(v) : kind === "number?" && v === null;
    if (!ok) throw refuse();
  }
  return parsed;
}

/**
 * The answer for rows read with `page.read` as their limit: a plain array for
 * a caller who did not ask for pages, else the page and, when more follow, the
 * cursor after its last row (`keyOf` gives a row's sort key, in the order the
 * query compares it).
 */
export function pageAnswer<R, S>(rows: R[], page: Page, keyOf: (row: R) => unknown[], shape: (rows: R[]) => S[]): S[] | { items: S[]; cursor?: string } {
  const more = rows.length > page.limit;
  const kept = more ? rows.slice(0, page.limit) : rows;
  // The key is taken before shaping, which may turn the rows into answers in place.
  const cursor = more ? encodeCursor(keyOf(kept[kept.length - 1])) : undefined;
  const items = shape(kept);
  if (!page.paged) return items;
  return cursor ? { items, cursor } : { items };
}
