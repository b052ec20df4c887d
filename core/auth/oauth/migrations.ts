// The OAuth tables' migrations, imported rather than read from disk so a
// compiled binary carries them.
import type { MigrationSet } from "../../db/migrate.ts";
import journal from "./migrations/meta/_journal.json" with { type: "json" };
import m0000 from "./migrations/0000_oauth.sql" with { type: "text" };
import m0001 from "./migrations/0001_code_policy.sql" with { type: "text" };

export const oauthMigrations: MigrationSet = { journal, sql: { "0000_oauth": m0000, "0001_code_policy": m0001 } };
