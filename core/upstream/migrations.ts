// The cache table's drizzle-kit migrations, imported rather than read from
// disk so a compiled binary carries them, and applied with the core's at
// start. Add one import per new migration.
import type { MigrationSet } from "../db/migrate.ts";
import journal from "./migrations/meta/_journal.json";
import m0000 from "./migrations/0000_upstream_cache.sql" with { type: "text" };

export const upstreamMigrations: MigrationSet = {
  journal,
  sql: { "0000_upstream_cache": m0000 },
};
