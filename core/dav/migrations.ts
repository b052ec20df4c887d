// The sync state's migrations, imported rather than read from disk so a
// compiled binary carries them. Add one import per new migration.
import type { MigrationSet } from "../db/migrate.ts";
import journal from "./migrations/meta/_journal.json" with { type: "json" };
import m0000 from "./migrations/0000_dav.sql" with { type: "text" };
import m0001 from "./migrations/0001_uid.sql" with { type: "text" };

export const davMigrations: MigrationSet = { journal, sql: { "0000_dav": m0000, "0001_uid": m0001 } };
