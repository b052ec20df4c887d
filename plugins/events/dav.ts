// The account's events as one CalDAV calendar. A client's VEVENT becomes
// events/create, so it is validated and scheduled like any API call. A
// change is checked by events/create the same way and then made to the event
// itself: it keeps its id, its prompt and its firing history, and an
// occurrence that already fired does not fire again. Only a new start or
// repeat reschedules it.
//
// The VEVENT a client sent stays the record: should the event change other
// than through the client, the lines of what the event keeps (SUMMARY,
// DESCRIPTION, DTSTART, DTEND or DURATION, RRULE) are rewritten and alarms,
// attendees, locations and every other line stay as the client wrote them.
import { and, eq } from "drizzle-orm";
import type { DavCollection } from "../../core/dav/collection.ts";
import { calendarComponent, ICAL, textOf, uidOf } from "../../core/dav/ical.ts";
import { ContentPatch, escapeText } from "../../core/dav/patch.ts";
import { HearthError } from "../../core/errors.ts";
import type { Ctx } from "../../core/plugin.ts";
import { formatTime, parseTime } from "../../core/scheduler/recurrence.ts";
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

/** What decides when an event fires. */
const timing = (e: Pick<Row, "start" | "offset" | "repeat" | "tz">) => JSON.stringify([e.start, e.offset, e.repeat, e.tz]);

/** The client's VEVENT with what the event keeps brought up to the record; every other line as sent. */
function patchEvent(raw: string, e: Row, uid: string): string {
  const { args } = argsOf(raw);
  const p = new ContentPatch(raw, "VEVENT");
  if (args.title !== e.title) p.setValue("SUMMARY", escapeText(e.title));
  if (args.note !== e.note) {
    if (e.note) p.setValue("DESCRIPTION", escapeText(e.note));
    else p.remove("DESCRIPTION");
  }
  const start = parseTime(args.when as string);
  const minutes = (args.minutes as number | undefined) ?? 30;
  if (!start.ok || start.at !== e.start || minutes !== e.minutes || ((args.repeat as string | undefined) ?? null) !== e.repeat) {
    // The times as the calendar writes them, with the zone they name when the client's text lacks it.
    const fresh = new ContentPatch(renderCalendar({ host: "hearth", events: [e], now: e.created, uid }), "VEVENT");
    for (const name of ["DTSTART", "DTEND", "DURATION", "RRULE", "RDATE", "EXDATE"]) p.remove(name);
    for (const name of ["DTSTART", "DTEND", "RRULE", "RDATE"]) for (const line of fresh.lines(name)) p.add(line);
    const tzid = /;TZID=([^:;]+)/.exec(fresh.lines("DTSTART")[0] ?? "")?.[1];
    if (tzid && !p.block("VTIMEZONE", tzid).length) p.addBefore(fresh.block("VTIMEZONE", tzid));
  }
  return p.toString();
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
    if (o.raw) return patchEvent(o.raw, e, o.uid);
    return renderCalendar({ host: "hearth", events: [e], now: e.created, uid: o.uid });
  },
  async put(text, id, ctx) {
    const { args, uid, tzid } = argsOf(text);
    // When events keep a time zone, a client's zone is passed on (imported here: index.ts imports this file).
    const { default: plugin } = await import("./index.ts");
    if (tzid && tzid !== "UTC" && tzid !== "floating" && "tz" in plugin.methods.create.args.properties) args.tz = tzid;
    const before = id ? await own(ctx, id) : undefined;
    const made = (await ctx.call("events", "create", args)) as { id: string };
    if (!before) return { id: made.id, uid };
    // A change: events/create checked it and made it as a new event would be; that is moved onto
    // the event changed, in this request's write, and the new one goes, with nothing fired.
    const checked = (await own(ctx, made.id))!;
    await ctx.db.delete(events).where(eq(events.id, made.id)).run();
    await ctx.schedule.remove(made.id);
    const { title, note, start, offset, minutes, repeat, tz } = checked;
    await ctx.db.update(events).set({ title, note, start, offset, minutes, repeat, tz }).where(eq(events.id, before.id)).run();
    // Firing at the same times, its schedule (and so what already fired) stays as it is; at new ones
    // it fires from the new start, once for each occurrence, and its history is kept.
    if (timing(checked) !== timing(before)) {
      const scopes = ctx.caller.scopes === "*" ? "*" : [...new Set([...ctx.caller.scopes, "mail"])];
      await ctx.schedule.set({ ref: before.id, start, offset, repeat, tz, scopes });
    }
    return { id: before.id, uid };
  },
  async remove(id, ctx) {
    await ctx.call("events", "delete", { id });
  },
};
