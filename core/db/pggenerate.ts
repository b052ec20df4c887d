// Writes an owner's PostgreSQL migrations from its sqliteTable definitions
// (core/db/pgschema.ts), with drizzle-kit's PostgreSQL generator: the schema
// now is diffed against the snapshot of the last migration, and what changed
// becomes the next migration, in the journal format core/db/migrate.ts reads.
// Migrations written by hand (the full-text index) keep their place.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateDrizzleJson, generateMigration } from "drizzle-kit/api";
import { pgTablesOf } from "./pgschema.ts";

type Journal = { version: string; dialect: string; entries: { idx: number; version: string; when: number; tag: string; breakpoints: boolean }[] };

/** What the next PostgreSQL migration for `schema` in `out` would hold: none when the migrations there are up to date. */
export async function pendingPgMigration(schema: Record<string, unknown>, out: string) {
  const meta = join(out, "meta");
  const journalFile = join(meta, "_journal.json");
  const journal: Journal = existsSync(journalFile) ? JSON.parse(readFileSync(journalFile, "utf8")) : { version: "7", dialect: "postgresql", entries: [] };
  // The last snapshot drizzle-kit wrote (hand-written migrations have none).
  let prev: ReturnType<typeof generateDrizzleJson> | null = null;
  for (const e of [...journal.entries].reverse()) {
    const f = join(meta, `${String(e.idx).padStart(4, "0")}_snapshot.json`);
    if (existsSync(f)) {
      prev = JSON.parse(readFileSync(f, "utf8"));
      break;
    }
  }
  prev ??= generateDrizzleJson({});
  const cur = generateDrizzleJson(pgTablesOf(schema), prev.id);
  return { journal, cur, statements: await generateMigration(prev, cur) };
}

/** Generates the next PostgreSQL migration for `schema` into `out` (its meta/ holds the journal and snapshots); returns its tag, or null when nothing changed. */
export async function generatePgMigration(schema: Record<string, unknown>, out: string): Promise<string | null> {
  const meta = join(out, "meta");
  const journalFile = join(meta, "_journal.json");
  const { journal, cur, statements } = await pendingPgMigration(schema, out);
  if (statements.length === 0) return null;
  const idx = journal.entries.length ? Math.max(...journal.entries.map((e) => e.idx)) + 1 : 0;
  const tag = `${String(idx).padStart(4, "0")}_schema`;
  mkdirSync(meta, { recursive: true });
  writeFileSync(join(out, `${tag}.sql`), statements.join("\n--> statement-breakpoint\n") + "\n");
  writeFileSync(join(meta, `${String(idx).padStart(4, "0")}_snapshot.json`), JSON.stringify(cur, null, 2) + "\n");
  journal.entries.push({ idx, version: "7", when: Date.now(), tag, breakpoints: true });
  writeFileSync(journalFile, JSON.stringify(journal, null, 2) + "\n");
  return tag;
}
