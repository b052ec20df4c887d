// Where each owner of core tables keeps its schema and migrations. The SQLite
// migrations sit in <dir>/migrations (imported by the module that owns them,
// so the single binary carries them); the PostgreSQL ones, generated from the
// same schema by `bun run migrations`, in core/db/pg/<owner>. A plugin keeps
// its PostgreSQL migrations in the pg/ folder of its migrations folder.
import { join } from "node:path";

const core = join(import.meta.dir, "..");

export const coreOwners: { name: string; dir: string }[] = [
  { name: "core", dir: join(core, "db") },
  // The upstream response cache is core-owned but applied by core/upstream itself.
  { name: "upstream", dir: join(core, "upstream") },
  { name: "scheduler", dir: join(core, "scheduler") },
  { name: "ai", dir: join(core, "ai") },
  { name: "home", dir: join(core, "http", "pages", "home") },
  { name: "mail", dir: join(core, "mail") },
  { name: "pay", dir: join(core, "pay") },
  { name: "oauth", dir: join(core, "auth", "oauth") },
  { name: "audit", dir: join(core, "audit") },
  { name: "policy", dir: join(core, "policy") },
  { name: "people", dir: join(core, "settings") },
];

/** The PostgreSQL migrations folder of a core owner (dav's, which has no schema.ts, is written by hand). */
export const pgMigrationsOf = (owner: string) => join(import.meta.dir, "pg", owner);

/** A plugin's: pg/ inside its migrations folder. */
export const pgMigrationsIn = (migrationsDir: string) => join(migrationsDir, "pg");
