// The policy tables' migrations, imported rather than read from disk so a
// compiled binary carries them.
import type { MigrationSet } from "../db/migrate.ts";
import journal from "./migrations/meta/_journal.json" with { type: "json" };
import m0000 from "./migrations/0000_policies.sql" with { type: "text" };
import m0001 from "./migrations/0001_spend.sql" with { type: "text" };
import m0002 from "./migrations/0002_usdc.sql" with { type: "text" };
import m0003 from "./migrations/0003_round_trip.sql" with { type: "text" };
import m0004 from "./migrations/0004_push.sql" with { type: "text" };
import m0005 from "./migrations/0005_tasks.sql" with { type: "text" };

export const policyMigrations: MigrationSet = { journal, sql: { "0000_policies": m0000, "0001_spend": m0001, "0002_usdc": m0002, "0003_round_trip": m0003, "0004_push": m0004, "0005_tasks": m0005 } };
