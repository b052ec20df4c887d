// The home page's table, imported rather than read from disk so a compiled
// binary carries it, and applied with the core's at start. Add one import per
// new migration.
import type { MigrationSet } from "../../../db/migrate.ts";
import journal from "./migrations/meta/_journal.json";
import m0000 from "./migrations/0000_home_prefs.sql" with { type: "text" };
import m0001 from "./migrations/0001_card_prefs.sql" with { type: "text" };
import m0002 from "./migrations/0002_drop_card_columns.sql" with { type: "text" };

export const homeMigrations: MigrationSet = { journal, sql: { "0000_home_prefs": m0000, "0001_card_prefs": m0001, "0002_drop_card_columns": m0002 } };
