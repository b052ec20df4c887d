// The account's events as one CalDAV calendar. A client's VEVENT becomes
// events/create (a change: events/delete then events/create, keeping the
// prompt), so it is validated and scheduled like any API call.
import { and, eq } from "drizzle-orm";
import type { DavCollection } from "../../core/dav/collection.ts";
import { calendarComponent, ICAL, textOf, uidOf } from "../../core/dav/ical.ts";
import { HearthError } from "../../core/errors.ts";
import type { Ctx } from "../../core/plugin.ts";
import { formatTime } from "../../core/scheduler/recurrence.ts";
import { renderCalendar } from "./ics.ts";
import { events } from "./schema.ts";

type Row = typeof events.$inferSelect;
const DAY_MINUTES = 1440;
const bad = (message: string) => new HearthError("invalid_argument", message, { field: "body" });

/** RRULE to the repeats the scheduler keeps: every hour, day, week or month, with no end and on the start's own weekday or month day. */
function repeatOf(comp: InstanceType<typeof ICAL.Component>, start: InstanceType<typeof ICAL.Time>): string | undefined {
  const rules = comp.getAllProperties("rrule");
  if (rules.length === 0) return undefined;
  const r = rules[0].getFirstValue() as InstanceType<typeof ICAL.Recur>;
  const freq = String(r.freq ?? "").toLowerCase();
  const refuse = (why: string) => bad(`RRULE ${r.toString()} cannot be kept: ${why}; repeats are every hour, day, week or month, without an end`);
  // Monthly on the 29th or 30th is written with each short February listed as an RDATE (see ics.ts), so those come back from clients.
  const ownRdates = freq === "monthly" && start.day >= 29;
  if (rules.length > 1 || comp.hasProperty("exdate") || (comp.hasProperty("rdate") && !ownRdates)) throw refuse("more than one rule, or dates added or left out");
  if (!["hourly", "daily", "weekly", "monthly"].includes(freq)) throw refuse(`${r.freq} is not a repeat the calendar keeps`);
  if ((r.interval ?? 1) !== 1) throw refuse("an interval other than 1");
  if (r.count || r.until) throw refuse("an end");
  const parts = r.parts as Record<string, unknown[]>;
  for (const [k, v] of Object.entries(parts)) {
    const own =
      (k === "BYDAY" && freq === "weekly" && v.length === 1 && String(v[0]) === ["SU", "MO", "TU", "WE", "TH", "FR", "SA"][start.dayOfWeek() - 1]) ||
      (k === "BYMONTHDAY" && freq === "monthly" && v.length === 1 && (Number(v[0]) === start.day || (Number(v[0]) === -1 && start.day === 31)));
    if (!own) throw refuse(`${k}=${v.join(",")} is not the start's own`);
  }
  return freq;
}

function argsOf(text: string) {
  const comp = calendarComponent(text, "vevent");
  const ev = new ICAL.Event(comp);
  const start = ev.startDate;
  if (!start) throw bad("the VEVENT has no DTSTART");
  const at = start.toUnixTime() * 1000;
  const offset = start.isDate || start.zone?.tzid === "floating" ? 0 : Math.round(start.utcOffset() / 60);
  const timed = comp.hasProperty("dtend") || comp.hasProperty("duration");
  const minutes = start.isDate ? DAY_MINUTES : timed ? Math.round(ev.duration.toSeconds() / 60) : 0;
  const args: Record<string, unknown> = { title: textOf(comp, "summary"), when: formatTime(at, offset), note: textOf(comp, "description") };
  // No length (or none at all) takes the calendar's default; a negative one is refused by events/create, naming minutes.
  if (minutes !== 0) args.minutes = minutes;
  const repeat = repeatOf(comp, start);
  if (repeat) args.repeat = repeat;
  return { args, uid: uidOf(comp), tzid: start.zone?.tzid };
}

function own(ctx: Ctx, id: string): Promise<Row | undefined> {
  return ctx.db.select().from(events).where(eq(events.id, id)).get();
}

export const eventsCalendar: DavCollection = {
  type: "calendar",
  component: "VEVENT",
  displayName: "Events",
  list: async (ctx) => (await ctx.db.select().from(events).where(eq(events.owner, ctx.account.id)).all()).map((e) => ({ id: e.id, data: e })),
  get: async (id, ctx) => {
    const e = await ctx.db.select().from(events).where(and(eq(events.id, id), eq(events.owner, ctx.account.id))).get();
    return e && { id: e.id, data: e };
  },
  render: (rec, o) => {
    const e = rec.data as Row;
    return renderCalendar({ host: "hearth", events: [e], now: e.created, uid: o.uid });
  },
  async put(text, id, ctx) {
    const { args, uid, tzid } = argsOf(text);
    // When events keep a time zone, a client's zone is passed on (imported here: index.ts imports this file).
    const { default: plugin } = await import("./index.ts");
    if (tzid && tzid !== "UTC" && tzid !== "floating" && "tz" in plugin.methods.create.args.properties) args.tz = tzid;
    const before = id ? await own(ctx, id) : undefined;
    if (before?.prompt) args.prompt = before.prompt;
    if (id) await ctx.call("events", "delete", { id });
    const made = (await ctx.call("events", "create", args)) as { id: string };
    return { id: made.id, uid };
  },
  async remove(id, ctx) {
    await ctx.call("events", "delete", { id });
  },
};
