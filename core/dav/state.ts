// What clients have been told about each collection: a name (href) per
// record, a fingerprint of the record as the service keeps it, the client's
// own text while the record is as that text left it, and a revision counter
// that is the collection's CTag and sync token. Reconciling with the service's
// records on every request is what makes changes over the API (or the agent,
// or another client) show up as new ETags and in sync-collection, deletions
// included, without the services knowing about DAV at all.
import { and, eq, ne, or, sql } from "drizzle-orm";
import type { Db } from "../plugin.ts";
import type { DavRecord } from "./collection.ts";
import { davCollections, davItems } from "./schema.ts";

export interface Item {
  name: string;
  ref: string | null;
  uid: string | null;
  fingerprint: string | null;
  raw: string | null;
  raw_fingerprint: string | null;
  revision: number;
}

export interface Synced {
  revision: number;
  items: Item[];
  records: Map<string, DavRecord>;
  /** The live items by name. */
  byName: Map<string, Item>;
}

const live = (items: Item[]) => new Map(items.filter((i) => i.ref !== null).map((i) => [i.name, i]));

const hash = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");
export const fingerprintOf = (r: DavRecord) => hash(JSON.stringify(r.data)).slice(0, 32);

/** The client's text stands for the record while nothing changed it since. */
export const rawStands = (i: Item) => i.raw !== null && i.raw_fingerprint === i.fingerprint;

export function etagOf(i: Item): string {
  return `"${hash(`${i.fingerprint}\n${rawStands(i) ? i.raw : ""}`).slice(0, 24)}"`;
}

export async function revisionOf(db: Db, account: string, collection: string): Promise<number> {
  const row = await db
    .select({ revision: davCollections.revision })
    .from(davCollections)
    .where(and(eq(davCollections.account, account), eq(davCollections.collection, collection)))
    .get();
  return row?.revision ?? 0;
}

export function itemsOf(db: Db, account: string, collection: string): Promise<Item[]> {
  return db
    .select({ name: davItems.name, ref: davItems.ref, uid: davItems.uid, fingerprint: davItems.fingerprint, raw: davItems.raw, raw_fingerprint: davItems.raw_fingerprint, revision: davItems.revision })
    .from(davItems)
    .where(and(eq(davItems.account, account), eq(davItems.collection, collection)))
    .all();
}

const named = (account: string, collection: string, name: string) => and(eq(davItems.account, account), eq(davItems.collection, collection), eq(davItems.name, name));

/**
 * Brings the collection's state up to the service's records: a new record
 * gets a name, a changed one a new revision, a vanished one a tombstone
 * (kept for sync-collection). Runs in the request's write transaction.
 */
export async function reconcile(db: Db, account: string, collection: string, ext: string, list: DavRecord[]): Promise<Synced> {
  const items = await itemsOf(db, account, collection);
  const byRef = new Map(items.filter((i) => i.ref !== null).map((i) => [i.ref!, i]));
  const names = new Set(items.map((i) => i.name));
  const records = new Map(list.map((r) => [r.id, r]));
  const current = await revisionOf(db, account, collection);
  const next = current + 1;
  let changed = false;
  for (const r of list) {
    const fp = fingerprintOf(r);
    const item = byRef.get(r.id);
    if (!item) {
      let name = `${r.id}${ext}`;
      while (names.has(name)) name = `${r.id}-${crypto.randomUUID().slice(0, 8)}${ext}`;
      names.add(name);
      await db.insert(davItems).values({ account, collection, name, ref: r.id, uid: r.id, fingerprint: fp, revision: next }).run();
      changed = true;
    } else if (item.fingerprint !== fp) {
      await db.update(davItems).set({ fingerprint: fp, revision: next }).where(named(account, collection, item.name)).run();
      changed = true;
    }
  }
  for (const item of items)
    if (item.ref !== null && !records.has(item.ref)) {
      await db.update(davItems).set({ ref: null, raw: null, raw_fingerprint: null, fingerprint: null, revision: next }).where(named(account, collection, item.name)).run();
      changed = true;
    }
  if (changed)
    await db
      .insert(davCollections)
      .values({ account, collection, revision: next })
      .onConflictDoUpdate({ target: [davCollections.account, davCollections.collection], set: { revision: next } })
      .run();
  const now = changed ? await itemsOf(db, account, collection) : items;
  return { revision: changed ? next : current, items: now, records, byName: live(now) };
}

const columns = { name: davItems.name, ref: davItems.ref, uid: davItems.uid, fingerprint: davItems.fingerprint, raw: davItems.raw, raw_fingerprint: davItems.raw_fingerprint, revision: davItems.revision };

/** One item by its name (the table's key): what a request for one resource reads, whatever the collection's size. */
export async function itemNamed(db: Db, account: string, collection: string, name: string): Promise<Item | null> {
  return (await db.select(columns).from(davItems).where(named(account, collection, name)).get()) ?? null;
}

/** The collection's next revision, taken in one statement: a change to one item is recorded under it. */
async function nextRevision(db: Db, account: string, collection: string): Promise<number> {
  const row = await db
    .insert(davCollections)
    .values({ account, collection, revision: 1 })
    .onConflictDoUpdate({ target: [davCollections.account, davCollections.collection], set: { revision: sql`${davCollections.revision} + 1` } })
    .returning({ revision: davCollections.revision })
    .get();
  return row!.revision;
}

/**
 * Brings one item up to its record as the service has it now (undefined: the
 * record is gone), as reconcile does for the whole collection: a changed
 * record gets a new revision, a vanished one a tombstone. Returns the item.
 */
export async function reconcileOne(db: Db, account: string, collection: string, item: Item, record: DavRecord | undefined): Promise<Item> {
  if (item.ref === null) return item;
  if (!record) {
    const revision = await nextRevision(db, account, collection);
    await db.update(davItems).set({ ref: null, raw: null, raw_fingerprint: null, fingerprint: null, revision }).where(named(account, collection, item.name)).run();
    return { ...item, ref: null, raw: null, raw_fingerprint: null, fingerprint: null, revision };
  }
  const fingerprint = fingerprintOf(record);
  if (item.fingerprint === fingerprint) return item;
  const revision = await nextRevision(db, account, collection);
  await db.update(davItems).set({ fingerprint, revision }).where(named(account, collection, item.name)).run();
  return { ...item, fingerprint, revision };
}

/**
 * Records what a client's PUT left: the name points at the record, with the
 * client's text as its form while the record stays as it is now, under a new
 * revision. A record another name pointed at (a client writing one UID under
 * a second name; `others` says whether one does, from sharers()) is that
 * name's no longer.
 */
export async function written(db: Db, account: string, collection: string, name: string, record: DavRecord, uid: string, raw: string, others = true): Promise<Item> {
  const revision = await nextRevision(db, account, collection);
  if (others)
    await db
      .update(davItems)
      .set({ ref: null, raw: null, raw_fingerprint: null, fingerprint: null, revision })
      .where(and(eq(davItems.account, account), eq(davItems.collection, collection), eq(davItems.ref, record.id), ne(davItems.name, name)))
      .run();
  const fingerprint = fingerprintOf(record);
  const item = { name, ref: record.id, uid, fingerprint, raw, raw_fingerprint: fingerprint, revision };
  await db
    .insert(davItems)
    .values({ account, collection, ...item })
    .onConflictDoUpdate({ target: [davItems.account, davItems.collection, davItems.name], set: { ref: record.id, uid, fingerprint, raw, raw_fingerprint: fingerprint, revision } })
    .run();
  return item;
}

/**
 * The live items other than `name` that hold `uid` or point at the record
 * `ref`, in one read: the first are a UID conflict, the second lose the
 * record to `name` (written()). Tombstones are left out here rather than in
 * the query: "ref IS NOT NULL" beside the OR made SQLite walk the ref index
 * over every live item of the collection, where the OR alone is two lookups,
 * one in the uid index and one in the ref index (a UID's tombstones are few).
 */
export async function sharers(db: Db, account: string, collection: string, uid: string, ref: string, name: string): Promise<{ holder: Item | null; others: boolean }> {
  const found = (
    await db
      .select(columns)
      .from(davItems)
      .where(and(or(and(eq(davItems.account, account), eq(davItems.collection, collection), eq(davItems.uid, uid)), and(eq(davItems.account, account), eq(davItems.collection, collection), eq(davItems.ref, ref))), ne(davItems.name, name)))
      .all()
  ).filter((i) => i.ref !== null);
  return { holder: found.find((i) => i.uid === uid) ?? null, others: found.some((i) => i.ref === ref) };
}

/** A client's DELETE: the name becomes a tombstone under a new revision. */
export async function removed(db: Db, account: string, collection: string, name: string) {
  const revision = await nextRevision(db, account, collection);
  await db.update(davItems).set({ ref: null, raw: null, raw_fingerprint: null, fingerprint: null, revision }).where(named(account, collection, name)).run();
}
