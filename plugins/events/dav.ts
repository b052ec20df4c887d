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
import { type DavCollection, ICAL, textOf, uidOf, HearthError, type Ctx, formatTime, REPEATS, zoneOffset, type Repeat, ianaZone, signedLengthOf, Zones } from "hearth";
import { calendarSeries, ContentPatch, escapeText } from "hearth/dav";
import { renderCalendar } from "./ics.ts";
import { events } from "./schema.ts";
import { instanceZone } from "./zone.ts";

type Row = typeof events.$inferSelect;
type Comp = InstanceType<typeof ICAL.Component>;
type Time = InstanceType<typeof ICAL.Time>;
const MIN = 60_000;
const DAY_MINUTES = 1440;
/** events/create's bounds on what it is given; the client's text keeps the whole of a longer note. */
const NOTE_MAX = 10_000;
const bad = (message: string) => new HearthError("invalid_argument", message, { field: "body" });

/**
 * RRULE to one of the repeats the API keeps (every hour, day, week or month,
 * with no end, on the start's own weekday or month day), or undefined when
 * the series needs its rule kept: more than that, or dates added or left out.
 */
function simpleRepeat(comp: Comp, start: Time): Repeat | undefined {
  const rules = comp.getAllProperties("rrule");
  if (rules.length !== 1) return undefined;
  const r = rules[0].getFirstValue() as InstanceType<typeof ICAL.Recur>;
  const freq = String(r.freq ?? "").toLowerCase() as Repeat;
  if (!REPEATS.includes(freq) || (r.interval ?? 1) !== 1 || r.count || r.until || comp.hasProperty("exdate")) return undefined;
  // Monthly on the 29th or 30th is written with each short February listed as an RDATE (see ics.ts); such a rule alone skips them, as RFC 5545 has it.
  if (freq === "monthly" && start.day >= 29 && start.day <= 30 && !comp.hasProperty("rdate")) return undefined;
  if (comp.hasProperty("rdate") && !(freq === "monthly" && start.day >= 29)) return undefined;
  const parts = r.parts as Record<string, unknown[]>;
  const bymonthday = parts.BYMONTHDAY;
  if (freq === "monthly" && start.day === 31 && !(bymonthday?.length === 1 && Number(bymonthday[0]) === -1)) return undefined;
  for (const [k, v] of Object.entries(parts)) {
    const own =
      (k === "BYDAY" && freq === "weekly" && v.length === 1 && String(v[0]) === ["SU", "MO", "TU", "WE", "TH", "FR", "SA"][start.dayOfWeek() - 1]) ||
      (k === "BYMONTHDAY" && freq === "monthly" && v.length === 1 && (Number(v[0]) === start.day || (Number(v[0]) === -1 && start.day === 31)));
    if (!own) return undefined;
  }
  return freq;
}

/** The properties that decide when a series happens; the rule kept for it holds these alone. */
const TIMING = ["uid", "dtstart", "dtend", "duration", "rrule", "rdate", "exdate", "recurrence-id", "status"];

/** The series' times as a VCALENDAR of their own (with the zones they name), for the scheduler. */
function ruleText(cal: Comp, comps: Comp[]): string {
  const out = new ICAL.Component("vcalendar");
  out.addPropertyWithValue("version", "2.0");
  for (const tz of cal.getAllSubcomponents("vtimezone")) out.addSubcomponent(new ICAL.Component(structuredClone(tz.toJSON())));
  for (const c of comps) {
    const v = new ICAL.Component("vevent");
    for (const name of TIMING) for (const p of c.getAllProperties(name)) v.addProperty(new ICAL.Property(structuredClone(p.toJSON())));
    out.addSubcomponent(v);
  }
  return out.toString();
}

/** The instance's zone when it has one, in which floating and all-day times are read (else UTC). */
const floatingOf = (config: Readonly<Record<string, string>>) => ({ tz: instanceZone(config), offset: 0 });

/**
 * What a client's VEVENT says, as events/create's arguments (what the API
 * checks) and as the event keeps it: its zone (a TZID, read in the IANA
 * database whether or not a VTIMEZONE came with it; a floating or all-day
 * time in the instance's zone), its length, its whole note, and its rule
 * when the API's repeats cannot say it.
 */
function readEvent(text: string, floating: { tz: string | null; offset: number }) {
  const { cal, master, overrides } = calendarSeries(text, "vevent");
  const startProp = master.getFirstProperty("dtstart");
  const startTime = startProp?.getFirstValue() as Time | null;
  if (!startProp || !startTime) throw bad("the VEVENT has no DTSTART");
  const zones = new Zones(cal, floating);
  const start = zones.of(startProp)!;
  const tzid = startProp.getParameter("tzid") as string | undefined;
  const utc = !startTime.isDate && !tzid && startTime.zone?.tzid === "UTC";
  const iana = startTime.isDate ? null : ianaZone(tzid);
  let tz: string | null;
  let offset: number;
  if (utc || iana === "UTC") [tz, offset] = [null, 0];
  else if (iana) [tz, offset] = [iana, zoneOffset(iana, start)];
  else if (tzid && !startTime.isDate && zones.known(tzid)) {
    // A zone only its VTIMEZONE describes: the offset it has at the start; the rule (kept below) has the rest.
    [tz, offset] = [null, Math.round((Date.UTC(startTime.year, startTime.month - 1, startTime.day, startTime.hour, startTime.minute, startTime.second) - start) / MIN)];
  } else [tz, offset] = [floating.tz, floating.tz ? zoneOffset(floating.tz, start) : floating.offset];
  const length = Math.round(signedLengthOf(master, zones) / MIN);
  const timed = master.hasProperty("dtend") || master.hasProperty("duration") || startTime.isDate;
  const minutes = timed ? length : 30;
  const simple = simpleRepeat(master, startTime);
  const repeating = master.hasProperty("rrule") || master.hasProperty("rdate");
  for (const c of [master, ...overrides]) tooFrequent(c);
  const cancelled = String(master.getFirstPropertyValue("status") ?? "").toUpperCase() === "CANCELLED";
  const needsRule = (repeating && !simple) || overrides.length > 0 || cancelled || (tzid !== undefined && !iana && tz === null && offset !== 0 && repeating);
  const freq = String((master.getFirstPropertyValue("rrule") as InstanceType<typeof ICAL.Recur> | null)?.freq ?? "").toLowerCase() as Repeat;
  const repeat: Repeat | null = simple ?? (REPEATS.includes(freq) ? freq : null);
  const note = textOf(master, "description");
  const args: Record<string, unknown> = { title: textOf(master, "summary"), when: formatTime(start, offset), note: note.slice(0, NOTE_MAX) };
  // No length (or none at all) takes the calendar's default; a negative one is refused by events/create, naming minutes. Longer than a day (a week's holiday) is checked as a day.
  if (minutes !== 0) args.minutes = Math.min(minutes, DAY_MINUTES);
  if (repeat) args.repeat = repeat;
  return {
    args,
    uid: uidOf(master),
    keep: { note, start, offset, tz, minutes: minutes || 30, repeat, rule: needsRule ? ruleText(cal, [master, ...overrides]) : null },
  };
}

/** The most occurrences a rule repeating more often than hourly may have: a few, which fire and are done. */
const MAX_FREQUENT = 24;

/**
 * Refuses a rule repeating every minute or second (FREQ=MINUTELY or
 * SECONDLY) unless its COUNT ends it within a few occurrences: each
 * occurrence is a reminder fired (and its prompt run through the agent), so
 * an open-ended one would keep the scheduler firing all the time.
 */
function tooFrequent(comp: InstanceType<typeof ICAL.Component>) {
  for (const r of comp.getAllProperties("rrule").map((p) => p.getFirstValue() as InstanceType<typeof ICAL.Recur>)) {
    const freq = String(r?.freq ?? "").toUpperCase();
    if (freq !== "MINUTELY" && freq !== "SECONDLY") continue;
    if (r.count && r.count <= MAX_FREQUENT) continue;
    throw new HearthError(
      "invalid_argument",
      `RRULE FREQ=${freq} repeats every ${freq === "MINUTELY" ? "minute" : "second"}: each occurrence fires a reminder, so the scheduler would fire without rest. Repeat hourly or less often, or end the rule with COUNT=${MAX_FREQUENT} or fewer`,
      { field: "RRULE" },
    );
  }
}

function own(ctx: Ctx, id: string): Promise<Row | undefined> {
  return ctx.db.select().from(events).where(eq(events.id, id)).get();
}

/** What decides when an event fires. */
const timing = (e: Pick<Row, "start" | "offset" | "repeat" | "tz" | "rule">) => JSON.stringify([e.start, e.offset, e.repeat, e.tz, e.rule]);

/** The client's VEVENT with what the event keeps brought up to the record; every other line as sent. */
function patchEvent(raw: string, e: Row, uid: string): string {
  const { args, keep } = readEvent(raw, { tz: e.tz, offset: e.offset });
  const p = new ContentPatch(raw, "VEVENT");
  if (args.title !== e.title) p.setValue("SUMMARY", escapeText(e.title));
  if (keep.note !== e.note) {
    if (e.note) p.setValue("DESCRIPTION", escapeText(e.note));
    else p.remove("DESCRIPTION");
  }
  if (keep.start !== e.start || keep.minutes !== e.minutes || keep.repeat !== e.repeat || keep.rule !== e.rule) {
    // The times as the calendar writes them, with the zone they name when the client's text lacks it.
    const fresh = new ContentPatch(renderCalendar({ host: "hearth", events: [e], now: e.created, uid }), "VEVENT");
    for (const name of ["DTSTART", "DTEND", "DURATION", "RRULE", "RDATE", "EXDATE"]) p.remove(name);
    for (const name of ["DTSTART", "DTEND", "RRULE", "RDATE", "EXDATE"]) for (const line of fresh.lines(name)) p.add(line);
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
  async put(text, id, ctx, current) {
    const { args, uid, keep } = readEvent(text, floatingOf(ctx.config));
    // The event changed, as the request read it to check the client's If-Match: read once.
    const before = id ? (current?.id === id ? (current.data as Row) : await own(ctx, id)) : undefined;
    // events/create checks what the API can say of it, as any call would be checked.
    const made = (await ctx.call("events", "create", args)) as { id: string };
    const checked = (await own(ctx, made.id))!;
    const target = before ?? checked;
    if (before) {
      // A change: what events/create made is moved onto the event changed, in this request's
      // write, and the new one goes, with nothing fired.
      await ctx.db.delete(events).where(eq(events.id, made.id)).run();
      await ctx.schedule.remove(made.id);
    }
    // The event as the client has it: its zone, length, whole note and rule, which the API's arguments cannot carry.
    const next = { title: checked.title, ...keep };
    // A new event events/create already made as the client has it needs no second write.
    if (before || (Object.keys(next) as (keyof typeof next)[]).some((k) => next[k] !== checked[k])) await ctx.db.update(events).set(next).where(eq(events.id, target.id)).run();
    // Firing at the same times, its schedule (and so what already fired) stays as it is; at new ones
    // it fires from the new start, once for each occurrence, and its history is kept.
    if (timing(next) !== timing(target) || (!before && timing(next) !== timing(checked))) {
      const scopes = ctx.caller.scopes === "*" ? "*" : [...new Set([...ctx.caller.scopes, "mail"])];
      await ctx.schedule.set({ ref: target.id, start: next.start, offset: next.offset, repeat: next.repeat, tz: next.tz, rule: next.rule, scopes });
    }
    // The row as it now stands, in the order of its columns as a read gives them, so it fingerprints as get() would.
    return { id: target.id, uid, record: { id: target.id, data: { ...target, ...next } } };
  },
  async remove(id, ctx) {
    await ctx.call("events", "delete", { id });
  },
};
