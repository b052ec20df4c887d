// The filters of calendar-query (RFC 4791 section 9.7, with time ranges as in
// 9.9 and repeats expanded) and addressbook-query (RFC 6352 section 10.5),
// applied to an object's text, and calendar-data's expand (RFC 4791 9.6.5):
// what a REPORT answers is what matches, so a phone asking for a month gets
// that month rather than the whole calendar.
import ICAL from "ical.js";
import { HearthError } from "../errors.ts";
import { DavPrecondition } from "./collection.ts";
import { child, children, NS, type El } from "./xml.ts";
import { lengthOf, Timeline, Zones, type Floating } from "../scheduler/rule.ts";
import { zoneOffset } from "../scheduler/zone.ts";

type Comp = InstanceType<typeof ICAL.Component>;
type Prop = InstanceType<typeof ICAL.Property>;
type Time = InstanceType<typeof ICAL.Time>;

/** Occurrences looked at for one repeating component before it is taken to match: a repeat every hour for years stays bounded. */
const MAX_OCCURRENCES = 100_000;

const bad = (message: string) => new HearthError("invalid_argument", message, { field: "body" });

/** A time-range's bounds as UTC milliseconds (absent: open). */
export interface Range {
  start: number;
  end: number;
}

/** An iCalendar UTC date-time (RFC 4791 9.9: start and end are UTC "Z" times). */
function utcOf(v: string | undefined, what: string): number | undefined {
  if (v === undefined) return undefined;
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(v.trim());
  if (!m) throw new DavPrecondition(403, { ns: NS.caldav, name: "valid-filter" }, `${what} "${v}" is not a UTC date-time such as 20260301T000000Z`, undefined, "body");
  return Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]);
}

export function rangeOf(el: El, what = "a time-range"): Range {
  const start = utcOf(el.attrs.start, `${what}'s start`);
  const end = utcOf(el.attrs.end, `${what}'s end`);
  if (start === undefined && end === undefined) throw new DavPrecondition(403, { ns: NS.caldav, name: "valid-filter" }, `${what} needs a start or an end`, undefined, "body");
  return { start: start ?? -Infinity, end: end ?? Infinity };
}

const ms = (t: Time) => t.toJSDate().getTime();

/** Whether [s, e) overlaps the range, a zero-length span at its moment (RFC 4791 9.9's table). */
const overlaps = (s: number, e: number, r: Range) => (e > s ? s < r.end && e > r.start : s >= r.start && s < r.end);

/** A component's own length from one start: DTEND or DUE, else DURATION, else a day for a date and a moment for a date-time. */
function spanOf(start: Time, duration: InstanceType<typeof ICAL.Duration> | null): number {
  if (duration) {
    const end = start.clone();
    end.addDuration(duration);
    return ms(end) - ms(start);
  }
  return start.isDate ? 86_400_000 : 0;
}

function durationOf(comp: Comp, start: Time | null): InstanceType<typeof ICAL.Duration> | null {
  const d = comp.getFirstPropertyValue("duration") as InstanceType<typeof ICAL.Duration> | null;
  if (d) return d;
  const end = (comp.getFirstPropertyValue("dtend") ?? comp.getFirstPropertyValue("due")) as Time | null;
  return end && start ? end.subtractDate(start) : null;
}

/**
 * Whether a VEVENT or VTODO (any of its occurrences, when it repeats) falls
 * in the range: a series' occurrences at the times its overrides moved them
 * to, EXDATEs left out, each local time read in its zone (timelineIn).
 */
function componentInRange(comp: Comp, r: Range, cal: Comp, zones: Zones): boolean {
  const start = comp.getFirstPropertyValue("dtstart") as Time | null;
  if (!start) {
    // A VTODO without DTSTART: its DUE, or else when it was done or made; with none of them it is always in range.
    const due = zones.of(comp.getFirstProperty("due"));
    if (due !== null) return overlaps(due, due, r);
    const done = zones.of(comp.getFirstProperty("completed") ?? comp.getFirstProperty("created"));
    return done !== null ? done < r.end && done >= r.start : true;
  }
  if (comp.hasProperty("recurrence-id")) {
    // An override stands for one occurrence: it is in range where it was moved to.
    const s = zones.of(comp.getFirstProperty("dtstart"))!;
    return overlaps(s, s + lengthOf(comp, zones), r);
  }
  const tl = timelineIn(cal, comp, zones);
  const window = tl.between(r.start, r.end, MAX_OCCURRENCES);
  return window.some((o) => overlaps(o.start, o.end, r));
}

/**
 * Floating and all-day times (no zone of their own) are read in the zone
 * the server gives, as RFC 4791 9.9 leaves to it: the instance's (HEARTH_TZ),
 * the zone the scheduler fires them in, so a query finds an event where it
 * fires; UTC when none is given.
 */
export const UTC_FLOATING: Floating = { tz: null, offset: 0 };

/** The occurrences of a calendar object's series whose master is `master`, cancelled ones kept (a calendar shows them). */
function timelineIn(cal: Comp, master: Comp, zones: Zones): Timeline {
  const uid = String(master.getFirstPropertyValue("uid") ?? "");
  const overrides = cal.getAllSubcomponents(master.name).filter((c) => c !== master && c.hasProperty("recurrence-id") && String(c.getFirstPropertyValue("uid") ?? "") === uid);
  return new Timeline(master, overrides, zones, false);
}

/** Collations of RFC 4790 that text-match names (i;ascii-casemap by default, i;unicode-casemap and i;octet). */
function fold(collation: string | undefined): (s: string) => string {
  switch (collation ?? "i;ascii-casemap") {
    case "i;octet":
      return (s) => s;
    case "i;ascii-casemap":
      return (s) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
    case "i;unicode-casemap":
      return (s) => s.normalize("NFKD").toLowerCase();
    default:
      throw new DavPrecondition(403, { ns: NS.caldav, name: "supported-collation" }, `the collation "${collation}" is not supported: use i;ascii-casemap, i;unicode-casemap or i;octet`, undefined, "body");
  }
}

/** One text-match on some values: substring by default (CardDAV also equals, starts-with, ends-with), negated when asked. */
function textMatches(tm: El, values: string[]): boolean {
  const f = fold(tm.attrs.collation);
  const want = f(tm.text);
  const how = tm.attrs["match-type"] ?? "contains";
  const one = (v: string) => {
    const s = f(v);
    return how === "equals" ? s === want : how === "starts-with" ? s.startsWith(want) : how === "ends-with" ? s.endsWith(want) : s.includes(want);
  };
  const hit = values.some(one);
  return tm.attrs["negate-condition"] === "yes" ? !hit : hit;
}

/** A property's values as text, each of a list (N's parts, CATEGORIES) on its own and joined. */
function textsOf(p: Prop): string[] {
  const out: string[] = [];
  for (const v of p.getValues() as unknown[]) {
    if (Array.isArray(v)) {
      const parts = v.flat().map((x) => String(x ?? ""));
      out.push(parts.join(";"), ...parts);
    } else out.push(v === null || v === undefined ? "" : String(v));
  }
  return out;
}

function paramMatches(pf: El, p: Prop, ns: string): boolean {
  const name = (pf.attrs.name ?? "").toLowerCase();
  const v = p.getParameter(name) as string | string[] | undefined;
  if (child(pf, ns, "is-not-defined")) return v === undefined;
  if (v === undefined) return false;
  const tm = child(pf, ns, "text-match");
  return tm ? textMatches(tm, Array.isArray(v) ? v : [String(v)]) : true;
}

/** A prop-filter on a component: CalDAV's (all of its tests) or CardDAV's (test="anyof" by default). */
function propMatches(pf: El, comp: Comp, ns: string, zones: Zones): boolean {
  const name = (pf.attrs.name ?? "").toLowerCase();
  const props = comp.getAllProperties(name);
  if (child(pf, ns, "is-not-defined")) return props.length === 0;
  if (props.length === 0) return false;
  const tests: ((p: Prop) => boolean)[] = [];
  const tr = child(pf, ns, "time-range");
  if (tr) {
    const r = rangeOf(tr);
    tests.push((p) => {
      const at = zones.of(p);
      return at !== null && overlaps(at, at, r);
    });
  }
  for (const tm of children(pf, ns, "text-match")) tests.push((p) => textMatches(tm, textsOf(p)));
  for (const pp of children(pf, ns, "param-filter")) tests.push((p) => paramMatches(pp, p, ns));
  if (tests.length === 0) return true;
  const all = ns === NS.caldav || pf.attrs.test === "allof";
  // A test holds when some property of that name passes it.
  return all ? tests.every((t) => props.some(t)) : tests.some((t) => props.some(t));
}

function compMatches(cf: El, comp: Comp, cal: Comp, zones: Zones): boolean {
  if (child(cf, NS.caldav, "is-not-defined")) return false;
  const tr = child(cf, NS.caldav, "time-range");
  if (tr) {
    const r = rangeOf(tr);
    const name = comp.name;
    if (name === "vevent" || name === "vtodo") {
      if (!componentInRange(comp, r, cal, zones)) return false;
    } else if (name === "valarm" || name === "vjournal" || name === "vfreebusy") {
      const start = comp.getFirstPropertyValue("dtstart") as Time | null;
      const at = zones.of(comp.getFirstProperty("dtstart"));
      if (start && at !== null && !overlaps(at, at + spanOf(start, durationOf(comp, start)), r)) return false;
    }
  }
  for (const pf of children(cf, NS.caldav, "prop-filter")) if (!propMatches(pf, comp, NS.caldav, zones)) return false;
  for (const sub of children(cf, NS.caldav, "comp-filter")) {
    const name = (sub.attrs.name ?? "").toLowerCase();
    const comps = comp.getAllSubcomponents(name);
    if (child(sub, NS.caldav, "is-not-defined")) {
      if (comps.length) return false;
    } else if (!comps.some((c) => compMatches(sub, c, cal, zones))) return false;
  }
  return true;
}

/** The calendar object's components, its time zones known to ical.js so its local times are read in their zone. */
function calendarOf(text: string): Comp {
  const cal = new ICAL.Component(ICAL.parse(text) as unknown[]);
  for (const tz of cal.getAllSubcomponents("vtimezone")) {
    const id = tz.getFirstPropertyValue("tzid");
    if (id && !ICAL.TimezoneService.has(String(id))) ICAL.TimezoneService.register(tz);
  }
  return cal;
}

/** Whether a calendar object's text matches a calendar-query's CALDAV:filter (RFC 4791 9.7). */
export function calendarMatches(filter: El, text: string, floating: Floating = UTC_FLOATING): boolean {
  const top = child(filter, NS.caldav, "comp-filter");
  if (!top) throw new DavPrecondition(403, { ns: NS.caldav, name: "valid-filter" }, "a calendar-query's filter holds one comp-filter, for VCALENDAR", undefined, "body");
  const cal = calendarOf(text);
  if ((top.attrs.name ?? "").toLowerCase() !== "vcalendar") return !!child(top, NS.caldav, "is-not-defined");
  return compMatches(top, cal, cal, new Zones(cal, floating));
}

/** Whether a vCard's text matches an addressbook-query's CARDDAV:filter (RFC 6352 10.5): any of its prop-filters, or all with test="allof". */
export function cardMatches(filter: El, text: string): boolean {
  const pfs = children(filter, NS.carddav, "prop-filter");
  if (pfs.length === 0) return true;
  const card = new ICAL.Component(ICAL.parse(text) as unknown[]);
  const one = (pf: El) => propMatches(pf, card, NS.carddav, new Zones(null, UTC_FLOATING));
  return filter.attrs.test === "allof" ? pfs.every(one) : pfs.some(one);
}

/**
 * The calendar object with a repeating component's occurrences in the range
 * written out one by one (RECURRENCE-ID, start and end in UTC, no RRULE), as
 * calendar-data's expand asks; an object that does not repeat keeps its
 * times, in UTC.
 */
export function expanded(text: string, r: Range, floating: Floating = UTC_FLOATING): string {
  const cal = calendarOf(text);
  const out = new ICAL.Component("vcalendar");
  for (const p of cal.getAllProperties()) out.addProperty(ICAL.Property.fromString(p.toICALString()));
  const zones = new Zones(cal, floating);
  // An all-day occurrence's instants are midnights in the floating zone: its date is read back there.
  const dateOf = (t: number) => {
    const d = new Date(t + (floating.tz ? zoneOffset(floating.tz, t) : floating.offset) * 60_000);
    return ICAL.Time.fromData({ year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), isDate: true });
  };
  const utc = (t: number) => ICAL.Time.fromJSDate(new Date(t), true);
  const repeats = (c: Comp) => c.hasProperty("rrule") || c.hasProperty("rdate");
  const comps = cal.getAllSubcomponents().filter((c) => c.name !== "vtimezone");
  const series = new Set(comps.filter((c) => !c.hasProperty("recurrence-id") && repeats(c)).map((c) => `${c.name}\n${String(c.getFirstPropertyValue("uid") ?? "")}`));
  for (const comp of comps) {
    const start = comp.getFirstPropertyValue("dtstart") as Time | null;
    const key = `${comp.name}\n${String(comp.getFirstPropertyValue("uid") ?? "")}`;
    // An override is written out below, where its series' occurrence is.
    if (comp.hasProperty("recurrence-id") && series.has(key)) continue;
    if (!start || !repeats(comp)) {
      const copy = copyOf(comp);
      for (const name of ["dtstart", "dtend", "due", "recurrence-id"]) {
        const p = copy.getFirstProperty(name);
        const v = p?.getFirstValue() as Time | null | undefined;
        if (p && v && !v.isDate) {
          copy.removeAllProperties(name);
          copy.addPropertyWithValue(name, utc(zones.of(p)!));
        }
      }
      out.addSubcomponent(copy);
      continue;
    }
    for (const o of timelineIn(cal, comp, zones).between(r.start, r.end, MAX_OCCURRENCES)) {
      if (!overlaps(o.start, o.end, r)) continue;
      const one = copyOf(o.comp);
      for (const name of ["rrule", "rdate", "exdate", "dtstart", "dtend", "duration", "due", "recurrence-id"]) one.removeAllProperties(name);
      // An all-day series stays in dates; a timed one is written in UTC (RFC 4791 9.6.5).
      const time = (t: number) => (start.isDate ? dateOf(t) : utc(t));
      one.addPropertyWithValue("recurrence-id", time(o.base));
      one.addPropertyWithValue("dtstart", time(o.start));
      if (o.end !== o.start) one.addPropertyWithValue(comp.name === "vtodo" ? "due" : "dtend", time(o.end));
      out.addSubcomponent(one);
    }
  }
  return `${out.toString()}\r\n`;
}

/** A component of its own: ical.js's components share their parsed form, so a copy is made from its text. */
const copyOf = (comp: Comp) => new ICAL.Component(structuredClone(comp.toJSON()));

/** calendar-data's expand element in a REPORT's prop, as a range, or null. */
export function expandOf(body: El): Range | null {
  const data = child(child(body, NS.dav, "prop"), NS.caldav, "calendar-data");
  const ex = child(data, NS.caldav, "expand");
  if (!ex) return null;
  const r = rangeOf(ex, "expand");
  if (!el(ex.attrs.start) || !el(ex.attrs.end)) throw bad("calendar-data's expand needs both a start and an end");
  return r;
}

const el = (v: string | undefined) => v !== undefined && v.trim() !== "";
