import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const events = sqliteTable(
  "events_events",
  {
    id: text("id").primaryKey(),
    owner: text("owner").notNull(),
    title: text("title").notNull(),
    note: text("note").notNull().default(""),
    /** First occurrence, ms since epoch. */
    start: integer("start").notNull(),
    /** Minutes east of UTC the event was given in; repeats keep their wall-clock time in it. */
    offset: integer("offset").notNull(),
    minutes: integer("minutes").notNull(),
    /** hourly, daily, weekly, monthly; null: once. */
    repeat: text("repeat", { enum: ["hourly", "daily", "weekly", "monthly"] }),
    /** IANA zone the event was given in (its offset matched the instance's zone then); repeats keep its local time. Null: the fixed offset. */
    tz: text("tz"),
    /**
     * The series as a calendar app sent it (a VCALENDAR of its DTSTART, DTEND,
     * RRULE, RDATE, EXDATE, STATUS and overridden occurrences), when repeat
     * cannot say it: it then decides every occurrence. Null: start and repeat do.
     */
    rule: text("rule"),
    /** Run through the agent at each firing; its answer is mailed to the owner. */
    prompt: text("prompt"),
    /**
     * The scopes of the token that made the event ("*" or a JSON list): its
     * prompt runs through the agent with no more. The firing itself may also
     * mail the owner their reminder; the agent may not borrow that.
     * Null (events made before this was kept): the firing's scopes without mail.
     */
    scopes: text("scopes"),
    created: integer("created").notNull(),
  },
  (t) => [
    index("events_events_owner").on(t.owner, t.start),
    // What events/list and events/free read: the single events still to end, by their end, and the repeating ones,
    // so neither reads a calendar's past (plugins/events/index.ts, stillOn).
    index("events_owner_end").on(t.owner, sql`(${t.start} + ${t.minutes} * 60000)`),
    index("events_repeating")
      .on(t.owner)
      .where(sql`(${t.repeat} IS NOT NULL OR ${t.rule} IS NOT NULL)`),
  ],
);

/** The secret that makes an account's iCalendar feed URL unguessable. */
export const eventFeeds = sqliteTable("events_feeds", {
  owner: text("owner").primaryKey(),
  key: text("key").notNull().unique(),
  created: integer("created").notNull(),
});
