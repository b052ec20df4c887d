// The scheduler's drizzle-kit migrations, imported rather than read from disk
// so a compiled binary carries them. Add one import per new migration.
import type { MigrationSet } from "../db/migrate.ts";
import journal from "./migrations/meta/_journal.json";
import m0000 from "./migrations/0000_schedule.sql" with { type: "text" };
import m0001 from "./migrations/0001_collections.sql" with { type: "text" };
import m0002 from "./migrations/0002_zone.sql" with { type: "text" };
import m0003 from "./migrations/0003_lease.sql" with { type: "text" };
import m0004 from "./migrations/0004_rule.sql" with { type: "text" };
import m0005 from "./migrations/0005_fence.sql" with { type: "text" };
import m0006 from "./migrations/0006_acted.sql" with { type: "text" };

export const schedulerMigrations: MigrationSet = {
  journal,
  sql: { "0000_schedule": m0000, "0001_collections": m0001, "0002_zone": m0002, "0003_lease": m0003, "0004_rule": m0004, "0005_fence": m0005, "0006_acted": m0006 },
};
