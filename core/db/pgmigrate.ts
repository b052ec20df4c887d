// The migrations an instance on PostgreSQL applies when its store opens, in
// the order Runtime.migrate applies SQLite's: the core's, the core modules',
// then each plugin's. They are the PostgreSQL migrations generated from the
// same tables (core/db/owners.ts says where each owner keeps them).
import { dirname, join } from "node:path";
import { readMigrations, type MigrationSet } from "./migrate.ts";
import { pgMigrationsIn, pgMigrationsOf } from "./owners.ts";
import { checkAgainstTables } from "./owntables.ts";
import type { PgStore } from "./pg.ts";

export interface PgOwner {
  owner: string;
  /** A plugin's folder: its PostgreSQL migrations are written from its schema.ts by `hearth plugin migrations`. */
  folder?: string;
  /** Where its PostgreSQL migrations are. */
  dir: string;
  /** Its migrations already read (a lone binary carries them, having no folders): then dir is not read. */
  set?: MigrationSet;
  /** A plugin's declared tables: its migrations may name no other existing table. */
  tables?: string[] | null;
}

/** The owners to migrate: the core, the core modules with migrations, and the plugins with migrations (whose folder their file names). */
export function pgOwners(moduleOwners: string[], plugins: { name: string; file: string; migrations?: string; hasMigrations: boolean; tables: string[] | null }[]): PgOwner[] {
  return [
    { owner: "core", dir: pgMigrationsOf("core") },
    ...moduleOwners.map((owner) => ({ owner, dir: pgMigrationsOf(owner) })),
    ...plugins.filter((p) => p.hasMigrations).map((p) => ({ owner: p.name, folder: dirname(p.file), dir: pgMigrationsIn(join(dirname(p.file), p.migrations ?? "migrations")), tables: p.tables })),
  ];
}

export async function migratePg(store: PgStore, owners: PgOwner[]): Promise<number> {
  const sets: { owner: string; set: MigrationSet; check?: (tag: string, text: string, tables: string[]) => void }[] = [];
  for (const o of owners) {
    const set = o.set ?? readMigrations(o.dir);
    if (!set) {
      // A plugin that ships only SQLite's migrations: its tables on PostgreSQL are written from its schema.ts, once, by whoever maintains it.
      const how = o.folder ? `\`hearth plugin migrations ${o.folder}\` from a Hearth checkout writes them from its schema.ts` : "run `bun run migrations`";
      throw new Error(`${o.folder ? `plugin "${o.owner}"` : o.owner} has no PostgreSQL migrations (${join(o.dir, "meta", "_journal.json")}): ${how}`);
    }
    const declared = o.tables;
    sets.push({
      owner: o.owner,
      set,
      check: declared
        ? (tag, text, tables) => {
            const bad = checkAgainstTables(tables, tag, text, declared);
            if (bad) throw new Error(`plugin "${o.owner}": migrations/pg/${tag}.sql: ${bad.name} ${bad.reason} (tables: ${declared.join(", ")})`);
          }
        : undefined,
    });
  }
  return store.migrate(sets);
}
