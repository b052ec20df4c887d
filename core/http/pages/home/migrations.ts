// The home page's table, imported rather than read from disk so a compiled
// binary carries it, and applied with the core's at start. Add one import per
// new migration.
import type { MigrationSet } from "../../../db/migrate.ts";
import journal from "./migrations/meta/_journal.json";
import m0000 from "./migrations/0000_home_prefs.sql" with { type: "text" };

export const homeMigrations: MigrationSet = { journal, sql: { "0000_home_prefs": m0000 } };
