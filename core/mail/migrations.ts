// The mail tables' drizzle-kit migrations, imported rather than read from disk
// so a compiled binary carries them, and applied with the core's at start.
// Add one import per new migration.
import type { MigrationSet } from "../db/migrate.ts";
import journal from "./migrations/meta/_journal.json";
import m0000 from "./migrations/0000_mail.sql" with { type: "text" };
import m0001 from "./migrations/0001_raw_index.sql" with { type: "text" };

export const mailMigrations: MigrationSet = { journal, sql: { "0000_mail": m0000, "0001_raw_index": m0001 } };
