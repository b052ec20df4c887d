// Activity is public while what it announces is public. When a service takes
// a record back (made private, deleted), the announcement goes too, so the
// stream never keeps a title that is no longer meant to be seen.
import { and, eq, sql } from "drizzle-orm";
import { activity } from "./schema.ts";
import type { Db } from "../plugin.ts";

/** Removes the activity a service announced about one of its records (emitted with data.ref). */
export function retract(db: Db, service: string, ref: string) {
  db.delete(activity)
    .where(and(eq(activity.service, service), sql`json_extract(${activity.data}, '$.ref') = ${ref}`))
    .run();
}
