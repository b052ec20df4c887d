// Applies drizzle-kit migrations (journal + SQL files) for one owner: the core
// or a plugin. Each owner keeps its own record of applied migrations, so a
// drop-in plugin's migrations never interleave with another's. Migrations can
// come from disk or be embedded (the single binary has no plugins folder).
import type { Database } from "bun:sqlite";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { PgStore } from "./pg.ts";
import { pgStandIns } from "./store.ts";

export interface MigrationSet {
  journal: { entries: { idx: number; when: number; tag: string; breakpoints: boolean }[] };
  sql: Record<string, string>;
}

export function readMigrations(dir: string): MigrationSet | null {
  const journalPath = join(dir, "meta", "_journal.json");
  if (!existsSync(journalPath)) return null;
  const journal = JSON.parse(readFileSync(journalPath, "utf8"));
  const sql: Record<string, string> = {};
  for (const e of journal.entries) sql[e.tag] = readFileSync(join(dir, `${e.tag}.sql`), "utf8");
  return { journal, sql };
}

/**
 * Refuses a database a newer Hearth has migrated (one restored from its
 * backup, or an upgrade undone): this build's code would read and write
 * tables shaped otherwise than it knows, so it is not opened at all.
 */
export function refuseNewer(owner: string, done: Set<string>, entries: { tag: string }[]) {
  const known = new Set(entries.map((e) => e.tag));
  const newer = [...done].filter((t) => !known.has(t));
  if (newer.length)
    throw new Error(`the database was migrated by a newer Hearth than this one (${owner}'s migration ${newer.sort().join(", ")} is unknown to this build): upgrade Hearth to open it`);
}

/** Called with each migration about to be applied, before any of it runs; a throw stops start-up. */
export type MigrationCheck = (tag: string, text: string) => void;

export function applyMigrations(db: Database, owner: string, set: MigrationSet, check?: MigrationCheck): number {
  // On PostgreSQL, migrating is asynchronous and happened when the store opened (core/instance.ts): here every migration must be found applied.
  const pg = pgStandIns.get(db) as PgStore | undefined;
  if (pg) {
    const done = pg.migrated(owner);
    if (done.size === 0) throw new Error(`${owner}: its PostgreSQL migrations were not applied when the store opened`);
    return 0;
  }
  db.run(
    "CREATE TABLE IF NOT EXISTS hearth_migrations (owner TEXT NOT NULL, tag TEXT NOT NULL, hash TEXT NOT NULL, applied INTEGER NOT NULL, PRIMARY KEY (owner, tag))",
  );
  const done = new Set(
    db
      .query<{ tag: string }, [string]>("SELECT tag FROM hearth_migrations WHERE owner = ?")
      .all(owner)
      .map((r) => r.tag),
  );
  let applied = 0;
  const entries = [...set.journal.entries].sort((a, b) => a.idx - b.idx);
  refuseNewer(owner, done, entries);
  for (const e of entries) {
    if (done.has(e.tag)) continue;
    const text = set.sql[e.tag];
    if (text === undefined) throw new Error(`migration ${owner}/${e.tag} is in the journal but its SQL is missing`);
    check?.(e.tag, text);
    const statements = text
      .split("--> statement-breakpoint")
      .map((s) => s.trim())
      .filter((s) => s.replace(/--.*$/gm, "").trim().length > 0);
    db.transaction(() => {
      for (const s of statements)
        try {
          db.run(s);
        } catch (err) {
          // A table that already exists here belongs to someone else: say whose migration met it.
          throw new Error(`migration ${owner}/${e.tag} failed: ${(err as Error).message}`);
        }
      db.run("INSERT INTO hearth_migrations (owner, tag, hash, applied) VALUES (?, ?, ?, ?)", [
        owner,
        e.tag,
        new Bun.CryptoHasher("sha256").update(text).digest("hex"),
        Date.now(),
      ]);
    })();
    applied++;
  }
  return applied;
}
