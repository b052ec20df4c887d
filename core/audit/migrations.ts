// The activity log's migrations, imported rather than read from disk so a
// compiled binary carries them.
import type { MigrationSet } from "../db/migrate.ts";
import journal from "./migrations/meta/_journal.json" with { type: "json" };
import m0000 from "./migrations/0000_audit_log.sql" with { type: "text" };
import m0001 from "./migrations/0001_no_time_index.sql" with { type: "text" };
import m0002 from "./migrations/0002_kinds.sql" with { type: "text" };

export const auditMigrations: MigrationSet = { journal, sql: { "0000_audit_log": m0000, "0001_no_time_index": m0001, "0002_kinds": m0002 } };
