// The payment tables' migrations, imported rather than read from disk so a
// compiled binary carries them.
import type { MigrationSet } from "../db/migrate.ts";
import journal from "./migrations/meta/_journal.json" with { type: "json" };
import m0000 from "./migrations/0000_pay_ledger.sql" with { type: "text" };
import m0001 from "./migrations/0001_append_only.sql" with { type: "text" };
import m0002 from "./migrations/0002_account_metering.sql" with { type: "text" };

export const payMigrations: MigrationSet = { journal, sql: { "0000_pay_ledger": m0000, "0001_append_only": m0001, "0002_account_metering": m0002 } };
