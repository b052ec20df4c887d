// The admin's tables' migrations (disabled accounts, notices for a person's
// next sign-in, the last backup's result), imported rather than read from
// disk so a compiled binary carries them.
import type { MigrationSet } from "../db/migrate.ts";
import journal from "./migrations/meta/_journal.json" with { type: "json" };
import m0000 from "./migrations/0000_disabled_accounts.sql" with { type: "text" };
import m0001 from "./migrations/0001_notices_backup_runs.sql" with { type: "text" };

export const peopleMigrations: MigrationSet = { journal, sql: { "0000_disabled_accounts": m0000, "0001_notices_backup_runs": m0001 } };
