// What clients have been told about each collection: a name (href) per
// record, a fingerprint of the record as the service keeps it, the client's
// own text while the record is as that text left it, and a revision counter
// that is the collection's CTag and sync token. Reconciling with the service's
// records on every request is what makes changes over the API (or the agent,
// or another client) show up as new ETags and in sync-collection, deletions
// included, without the services knowing about DAV at all.
import type { Database } from "bun:sqlite";
import type { DavRecord } from "./collection.ts";

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

export function revisionOf(db: Database, account: string, collection: string): number {
  return db.query<{ revision: number }, [string, string]>("SELECT revision FROM dav_collections WHERE account = ? AND collection = ?").get(account, collection)?.revision ?? 0;
}

export function itemsOf(db: Database, account: string, collection: string): Item[] {
  return db.query<Item, [string, string]>("SELECT name, ref, uid, fingerprint, raw, raw_fingerprint, revision FROM dav_items WHERE account = ? AND collection = ?").all(account, collection);
}

/**
 * Brings the collection's state up to the service's records: a new record
 * gets a name, a changed one a new revision, a vanished one a tombstone
 * (kept for sync-collection). Runs in the request's write transaction.
 */
export function reconcile(db: Database, account: string, collection: string, ext: string, list: DavRecord[]): Synced {
  const items = itemsOf(db, account, collection);
  const byRef = new Map(items.filter((i) => i.ref !== null).map((i) => [i.ref!, i]));
  const names = new Set(items.map((i) => i.name));
  const records = new Map(list.map((r) => [r.id, r]));
  const current = revisionOf(db, account, collection);
  const next = current + 1;
  let changed = false;
  for (const r of list) {
    const fp = fingerprintOf(r);
    const item = byRef.get(r.id);
    if (!item) {
      let name = `${r.id}${ext}`;
      while (names.has(name)) name = `${r.id}-${crypto.randomUUID().slice(0, 8)}${ext}`;
      names.add(name);
      db.run("INSERT INTO dav_items (account, collection, name, ref, uid, fingerprint, revision) VALUES (?, ?, ?, ?, ?, ?, ?)", [account, collection, name, r.id, r.id, fp, next]);
      changed = true;
    } else if (item.fingerprint !== fp) {
      db.run("UPDATE dav_items SET fingerprint = ?, revision = ? WHERE account = ? AND collection = ? AND name = ?", [fp, next, account, collection, item.name]);
      changed = true;
    }
  }
  for (const item of items)
    if (item.ref !== null && !records.has(item.ref)) {
      db.run("UPDATE dav_items SET ref = NULL, raw = NULL, raw_fingerprint = NULL, fingerprint = NULL, revision = ? WHERE account = ? AND collection = ? AND name = ?", [
        next,
        account,
        collection,
        item.name,
      ]);
      changed = true;
    }
  if (changed)
    db.run("INSERT INTO dav_collections (account, collection, revision) VALUES (?, ?, ?) ON CONFLICT (account, collection) DO UPDATE SET revision = excluded.revision", [
      account,
      collection,
      next,
    ]);
  return { revision: changed ? next : current, items: changed ? itemsOf(db, account, collection) : items, records };
}

/** Points a name at the record a client's PUT made or changed, before reconciling, so the record keeps the client's name. */
export function claim(db: Database, account: string, collection: string, name: string, ref: string, uid: string) {
  db.run(
    "INSERT INTO dav_items (account, collection, name, ref, uid, revision) VALUES (?, ?, ?, ?, ?, 0) ON CONFLICT (account, collection, name) DO UPDATE SET ref = excluded.ref, uid = excluded.uid",
    [account, collection, name, ref, uid],
  );
}

/** Keeps the client's text as the record's form while the record stays as it is now. */
export function keepRaw(db: Database, account: string, collection: string, name: string, raw: string) {
  db.run("UPDATE dav_items SET raw = ?, raw_fingerprint = fingerprint WHERE account = ? AND collection = ? AND name = ?", [raw, account, collection, name]);
}
