// What clients have been told about each collection: a name (href) per
// record, a fingerprint of the record as the service keeps it, the client's
// own text while the record is as that text left it, and a revision counter
// that is the collection's CTag and sync token. Reconciling with the service's
// records on every request is what makes changes over the API (or the agent,
// or another client) show up as new ETags and in sync-collection, deletions
// included, without the services knowing about DAV at all.
import { and, eq } from "drizzle-orm";
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
}

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
  return { revision: changed ? next : current, items: changed ? await itemsOf(db, account, collection) : items, records };
}

/** Points a name at the record a client's PUT made or changed, before reconciling, so the record keeps the client's name. */
export async function claim(db: Db, account: string, collection: string, name: string, ref: string, uid: string) {
  await db
    .insert(davItems)
    .values({ account, collection, name, ref, uid, revision: 0 })
    .onConflictDoUpdate({ target: [davItems.account, davItems.collection, davItems.name], set: { ref, uid } })
    .run();
}

/** Keeps the client's text as the record's form while the record stays as it is now. */
export async function keepRaw(db: Db, account: string, collection: string, name: string, raw: string) {
  await db.update(davItems).set({ raw, raw_fingerprint: davItems.fingerprint }).where(named(account, collection, name)).run();
}
