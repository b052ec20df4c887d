// Tables of the instance scheduler: what is scheduled, and the ledger of
// firings. A firing is claimed by inserting its (service, ref, due) row before
// it runs, with the claiming instance and a lease, so no other instance runs
// it while that one lives; one whose lease ran out (its instance died) is
// claimed again and run.
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const scheduleJobs = sqliteTable(
  "schedule_jobs",
  {
    service: text("service").notNull(),
    /** The owning service's id for what fires (an event id, ...). */
    ref: text("ref").notNull(),
    /** Account the firing runs as; null runs as the instance. */
    owner: text("owner"),
    /** Scopes of the caller who scheduled it ("*" or a JSON list), so a firing never exceeds them. */
    scopes: text("scopes").notNull(),
    /** First occurrence, ms since epoch. */
    start: integer("start").notNull(),
    /** Minutes east of UTC in which repeats keep their wall-clock time. */
    offset: integer("offset").notNull(),
    /** hourly, daily, weekly, monthly; null fires once. */
    repeat: text("repeat"),
    /** IANA zone whose local time the repeats keep across daylight-saving changes; null: the fixed offset. */
    tz: text("tz"),
    /** The series as RFC 5545 text (RRULE, EXDATE, overrides) when repeat cannot say it; it then decides every occurrence. */
    rule: text("rule"),
    /** The next firing not yet claimed; null when nothing is left to fire. */
    nextDue: integer("next_due"),
    created: integer("created").notNull(),
  },
  (t) => [primaryKey({ columns: [t.service, t.ref] }), index("schedule_jobs_next_due").on(t.nextDue)],
);

export const scheduleFirings = sqliteTable(
  "schedule_firings",
  {
    service: text("service").notNull(),
    ref: text("ref").notNull(),
    /** The occurrence this row is for (for a missed run: the first one missed). */
    due: integer("due").notNull(),
    /** claimed -> done | failed; or missed (never run, past the grace window). */
    status: text("status").notNull(),
    /** Occurrences this row stands for: 1, or how many were missed in a row. */
    count: integer("count").notNull().default(1),
    claimed: integer("claimed").notNull(),
    finished: integer("finished"),
    /** What the handler reported (JSON), or why it failed. */
    detail: text("detail"),
    /** The instance running a claimed firing (a random id per running instance). */
    owner: text("owner"),
    /** While claimed: until when (ms) the owner holds it; it renews this while the firing runs. Null once finished, and on claims made before leases, which are never run again. */
    lease: integer("lease"),
    /**
     * The claim's fencing token: 1 when first claimed, one more each time another instance takes it over. An effect
     * of the firing commits only while the row still names its instance and this token (Scheduler's fence).
     */
    fence: integer("fence").notNull().default(1),
    /**
     * 1 once a write of the firing has committed (set by the fence's own check, in that write's transaction, so
     * with its effect and only with it). A takeover that finds it set does not run the firing again: it records it done.
     */
    acted: integer("acted").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.service, t.ref, t.due] }), index("schedule_firings_lease").on(t.lease)],
);

/**
 * How the rounds of each collector (a service that polls its providers on a
 * schedule: news, video, social) went, so its answers can say how fresh they
 * are and a provider that is down is not asked again on every request.
 */
export const scheduleCollections = sqliteTable("schedule_collections", {
  service: text("service").primaryKey(),
  /** When the last round finished (ms). */
  attempted: integer("attempted").notNull(),
  /** When a round last reached at least one source (ms); null while none ever has. */
  succeeded: integer("succeeded"),
  /** Rounds in a row in which no source answered. */
  failures: integer("failures").notNull().default(0),
  /** Why the last round failed; null when it worked. */
  error: text("error"),
});
