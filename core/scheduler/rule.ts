// Schedules given as RFC 5545 text, for what the API's few repeats cannot
// say: a calendar app's event with INTERVAL, COUNT, UNTIL, BYDAY, RDATE,
// EXDATE, occurrences moved or cancelled (RECURRENCE-ID), all-day and
// floating times. ical.js expands the rule in local time, as RFC 5545 has it;
// each local time is then read in its TZID's IANA zone (through Intl, so the
// zone's real clock changes count, whatever VTIMEZONE the client sent or
// left out), else in the VTIMEZONE the text carries, else, like a floating
// time, in the zone (or offset) the schedule keeps. EXDATEs and overrides are
// matched by the instant they name, so a client writing them in UTC or in
// another zone than DTSTART's is read as its user meant.
import ICAL from "ical.js";
import { cadenceOf, type Cadence } from "./cadence.ts";
import { fromZoneLocal, validZone } from "./zone.ts";

type Comp = InstanceType<typeof ICAL.Component>;
type Time = InstanceType<typeof ICAL.Time>;
type Prop = InstanceType<typeof ICAL.Property>;

/** How local times with no zone of their own (floating, all-day) are read: in this IANA zone, else at this fixed offset (minutes east of UTC). */
export interface Floating {
  tz?: string | null;
  offset: number;
}

export interface Occurrence {
  start: number;
  end: number;
  /** The instant the rule gave it, which a RECURRENCE-ID names. */
  base: number;
  /** The component it takes its properties from: the series, or the override that changed it. */
  comp: Comp;
  cancelled: boolean;
}

/** Occurrences looked at for one rule before giving up: a rule that matches almost nothing (FREQ=SECONDLY with a far BYMONTH) stays bounded. */
const MAX_STEPS = 100_000;
const DAY = 86_400_000;

/** The IANA zone a TZID names: itself, or the zone at the end of a vendor's path ("/mozilla.org/20050126_1/Europe/London"), else null. */
export function ianaZone(tzid: string | null | undefined): string | null {
  if (!tzid) return null;
  const direct = validZone(tzid);
  if (direct) return direct;
  const parts = tzid.split("/").filter(Boolean);
  for (let i = 1; i < parts.length - 1; i++) {
    const z = validZone(parts.slice(i).join("/"));
    if (z) return z;
  }
  return null;
}

/** Reads the local times of one calendar object as instants. */
export class Zones {
  private vtz = new Map<string, InstanceType<typeof ICAL.Timezone>>();
  constructor(
    cal: Comp | null,
    readonly floating: Floating,
  ) {
    for (const c of cal?.getAllSubcomponents("vtimezone") ?? []) {
      const id = c.getFirstPropertyValue("tzid");
      if (id) this.vtz.set(String(id), new ICAL.Timezone(c));
    }
  }

  /** Whether the text carries a VTIMEZONE for this TZID. */
  known(tzid: string): boolean {
    return this.vtz.has(tzid);
  }

  /** The instant of a time value, read in the TZID it was written with (tzid) when it has no "Z". */
  instant(t: Time, tzid: string | null | undefined): number {
    const local = Date.UTC(t.year, t.month - 1, t.day, t.isDate ? 0 : t.hour, t.isDate ? 0 : t.minute, t.isDate ? 0 : t.second);
    if (!t.isDate && t.zone?.tzid === "UTC" && !tzid) return local;
    if (!t.isDate && tzid) {
      const iana = ianaZone(tzid);
      if (iana) return fromZoneLocal(iana, local);
      const vtz = this.vtz.get(tzid);
      if (vtz) {
        const floating = ICAL.Time.fromData({ year: t.year, month: t.month, day: t.day, hour: t.hour, minute: t.minute, second: t.second, isDate: false });
        return local - vtz.utcOffset(floating) * 1000;
      }
    }
    const f = this.floating;
    return f.tz ? fromZoneLocal(f.tz, local) : local - f.offset * 60_000;
  }

  /** The instant of a property's (first) time value. */
  of(p: Prop | null): number | null {
    const v = p?.getFirstValue() as Time | null | undefined;
    if (!v || typeof (v as Time).year !== "number") return null;
    return this.instant(v, p!.getParameter("tzid") as string | undefined);
  }
}

/** The span of a component from its start: DTEND, else DURATION, else a day for a date and a moment for a date-time (RFC 5545 3.6.1). */
export function lengthOf(comp: Comp, zones: Zones): number {
  return Math.max(0, signedLengthOf(comp, zones));
}

/** As lengthOf, negative when the end comes before the start (which a client should not send, and is told). */
export function signedLengthOf(comp: Comp, zones: Zones): number {
  const startProp = comp.getFirstProperty("dtstart");
  const start = startProp?.getFirstValue() as Time | null;
  if (!start) return 0;
  const s = zones.of(startProp);
  const endProp = comp.getFirstProperty("dtend") ?? comp.getFirstProperty("due");
  const e = endProp ? zones.of(endProp) : null;
  if (s !== null && e !== null) return e - s;
  const d = comp.getFirstPropertyValue("duration") as InstanceType<typeof ICAL.Duration> | null;
  if (d) return d.toSeconds() * 1000;
  return start.isDate ? DAY : 0;
}

const cancelledComp = (c: Comp) => String(c.getFirstPropertyValue("status") ?? "").toUpperCase() === "CANCELLED";

/** Rule positions ahead of what is expanded beyond which a look jumps (cadence.ts) rather than steps. */
const AHEAD = 64;
/** More than any zone's offset from UTC: a local time is within this of its instant. */
const SLACK = 26 * 3_600_000;
/** Instants past the year 9999 (which iCalendar cannot write) are not jumped to. */
const LAST = Date.UTC(9999, 11, 31);

/**
 * The occurrences of one series (a master component and the overrides of its
 * occurrences), in order of their start, computed as far as they are asked
 * for and kept, so a schedule read again and again is expanded once. A plain
 * rule (cadence.ts) is not stepped from its start to a far date: the look
 * jumps to the rule's occurrence near it, counts the occurrences before
 * (less the EXDATEs and cancelled ones among them) so each keeps its number,
 * and steps on from there; only the years looked at have their zone read.
 */
export class Timeline {
  /** Occurrences from index `from` on, in order; those before were counted, not listed. */
  private known: Occurrence[] = [];
  private from = 0;
  /** Every occurrence starting before this instant has an index below `from`. */
  private floor = -Infinity;
  /** The rule position (from 0, before EXDATEs) of the next time the iterator gives. */
  private pos = 0;
  private pending: Occurrence[] = [];
  private it: InstanceType<typeof ICAL.RecurExpansion> | null = null;
  private done = false;
  private steps = 0;
  private readonly exdates = new Set<number>();
  private readonly exdays = new Set<string>();
  private readonly overrides = new Map<number, Comp>();
  /** How far before its own instant an override moved an occurrence: what is known is final only this far behind the rule. */
  private readonly earliest: number;
  private readonly tzid: string | undefined;
  private readonly length: number;
  private readonly single: number | null = null;
  /** The rule without its EXDATEs, as ical.js expands it, and its first local time. */
  private readonly copy: Comp | null = null;
  private readonly localStart: Time | null = null;
  private readonly cadence: Cadence | null = null;
  /** Rule positions whose occurrence is left out (EXDATE, or cancelled when those are skipped), in order; found when first needed. */
  private dropped: number[] | null = null;

  constructor(
    readonly master: Comp,
    overrides: Comp[],
    readonly zones: Zones,
    /** Leave out cancelled occurrences (what fires), or keep them marked (what a calendar shows). */
    readonly skipCancelled = true,
  ) {
    const startProp = master.getFirstProperty("dtstart");
    const start = startProp?.getFirstValue() as Time | null;
    if (!start) throw new Error("a VEVENT with no DTSTART has no occurrences");
    this.tzid = startProp!.getParameter("tzid") as string | undefined;
    this.length = lengthOf(master, zones);
    for (const p of master.getAllProperties("exdate"))
      for (const v of p.getValues() as Time[]) {
        if (v.isDate) this.exdays.add(`${v.year}-${v.month}-${v.day}`);
        else this.exdates.add(zones.instant(v, p.getParameter("tzid") as string | undefined));
      }
    let earliest = 0;
    for (const o of overrides) {
      const at = zones.of(o.getFirstProperty("recurrence-id"));
      if (at === null) continue;
      this.overrides.set(at, o);
      const moved = zones.of(o.getFirstProperty("dtstart"));
      if (moved !== null) earliest = Math.max(earliest, at - moved);
    }
    this.earliest = earliest;
    if (!master.hasProperty("rrule") && !master.hasProperty("rdate")) {
      this.single = zones.instant(start, this.tzid);
    } else {
      // EXDATEs are matched here by instant, not by ical.js by local time.
      this.copy = new ICAL.Component(structuredClone(master.toJSON()));
      this.copy.removeAllProperties("exdate");
      // Expanded on the local time alone (its zone is read above, per occurrence): ical.js steps three times faster without one.
      this.localStart = ICAL.Time.fromData({ year: start.year, month: start.month, day: start.day, hour: start.hour, minute: start.minute, second: start.second, isDate: start.isDate });
      this.it = new ICAL.RecurExpansion({ component: this.copy, dtstart: this.localStart });
      // A cancelled series that fires nothing has nothing to jump to.
      if (!(skipCancelled && cancelledComp(master))) this.cadence = cadenceOf(master, this.localStart);
    }
  }

  private occurrenceOf(base: number, isDate: boolean, day: string): Occurrence | null {
    if (this.exdates.has(base) || (isDate && this.exdays.has(day))) return null;
    const o = this.overrides.get(base);
    let out: Occurrence;
    if (!o) out = { start: base, end: base + this.length, base, comp: this.master, cancelled: cancelledComp(this.master) };
    else {
      const start = this.zones.of(o.getFirstProperty("dtstart")) ?? base;
      const length = o.hasProperty("dtend") || o.hasProperty("duration") ? lengthOf(o, this.zones) : this.length;
      out = { start, end: start + length, base, comp: o, cancelled: cancelledComp(o) || cancelledComp(this.master) };
    }
    return out.cancelled && this.skipCancelled ? null : out;
  }

  /** Expands until `enough` holds (given the index one past the last known), or the rule ends. */
  private fill(enough: (end: number) => boolean) {
    while (!enough(this.from + this.known.length) && !this.done) {
      if (this.single !== null) {
        const s = this.startProp();
        const o = this.occurrenceOf(this.single, s.isDate, `${s.year}-${s.month}-${s.day}`);
        this.pending = o ? [o] : [];
        this.finish();
        continue;
      }
      let next: Time | null = null;
      try {
        next = this.steps++ < MAX_STEPS ? this.it!.next() : null;
      } catch {
        next = null;
      }
      if (!next) {
        this.finish();
        continue;
      }
      this.pos++;
      const base = this.zones.instant(next, this.tzid);
      const o = this.occurrenceOf(base, next.isDate, `${next.year}-${next.month}-${next.day}`);
      if (o) this.pending.push(o);
      // No later occurrence of the rule can start before this, however an override moved it.
      const settled = base - this.earliest;
      if (this.pending.some((p) => p.start < settled)) {
        this.pending.sort((a, b) => a.start - b.start);
        while (this.pending.length && this.pending[0].start < settled) this.known.push(this.pending.shift()!);
      }
    }
  }

  private startProp(): Time {
    return this.master.getFirstPropertyValue("dtstart") as Time;
  }

  private finish() {
    this.pending.sort((a, b) => a.start - b.start);
    this.known.push(...this.pending);
    this.pending = [];
    this.done = true;
  }

  /** The instant of the rule's n-th local time. */
  private baseOf(n: number): number {
    return this.zones.instant(this.cadence!.time(n), this.tzid);
  }

  /** The first rule position whose instant is at or after t: found on local times, then settled on the few near t in its zone. */
  private positionAtOrAfter(t: number): number {
    let n = this.cadence!.atOrAfterLocal(t - SLACK);
    while (this.baseOf(n) < t) n++;
    return n;
  }

  /** The rule position of an instant the rule gives, or null when it gives none there (before its end). */
  private positionOf(at: number): number | null {
    const n = this.positionAtOrAfter(at);
    return n < this.cadence!.end && this.baseOf(n) === at ? n : null;
  }

  /** How many rule positions before p are left out. */
  private droppedBefore(p: number): number {
    if (!this.dropped) {
      const c = this.cadence!;
      const out = new Set<number>();
      for (const at of this.exdates) {
        const n = this.positionOf(at);
        if (n !== null) out.add(n);
      }
      // An all-day series' EXDATEs by date; a timed one's dates match nothing (occurrenceOf).
      if (this.localStart!.isDate)
        for (const day of this.exdays) {
          const [y, m, d] = day.split("-").map(Number);
          const l = Date.UTC(y, m - 1, d);
          const n = c.atOrAfterLocal(l);
          if (n < c.end && c.local(n) === l) out.add(n);
        }
      if (this.skipCancelled)
        for (const [at, o] of this.overrides) {
          if (!cancelledComp(o)) continue;
          const n = this.positionOf(at);
          if (n !== null) out.add(n);
        }
      this.dropped = [...out].sort((a, b) => a - b);
    }
    let k = 0;
    while (k < this.dropped.length && this.dropped[k] < p) k++;
    return k;
  }

  /**
   * Starts the expansion again at rule position p: what comes before is
   * counted. An override moved across p's instant would be counted on the
   * wrong side of it, so p is taken back before any such.
   */
  private jump(p: number) {
    const c = this.cadence!;
    p = Math.max(0, Math.min(p, c.end));
    for (let moved = true; moved && p > 0; ) {
      moved = false;
      const b = this.baseOf(p);
      for (const [at, o] of this.overrides) {
        if (this.exdates.has(at) || (this.skipCancelled && cancelledComp(o))) continue;
        const s = this.zones.of(o.getFirstProperty("dtstart")) ?? at;
        if (at < b !== s < b) {
          p = Math.max(0, this.positionAtOrAfter(Math.min(at, s) + 1) - 1);
          moved = true;
          break;
        }
      }
    }
    this.known = [];
    this.pending = [];
    this.steps = 0;
    this.pos = p;
    this.from = p === 0 ? 0 : p - this.droppedBefore(p);
    this.floor = p === 0 ? -Infinity : this.baseOf(p);
    this.done = p >= c.end;
    if (this.done) {
      this.it = null;
      return;
    }
    const copy = p === 0 ? this.copy! : new ICAL.Component(structuredClone(this.copy!.toJSON()));
    if (p > 0) copy.getFirstProperty("rrule")!.setValue(c.ruleFrom(p));
    this.it = new ICAL.RecurExpansion({ component: copy, dtstart: p === 0 ? this.localStart! : c.time(p) });
  }

  /** The k-th occurrence (from 0), or null when the series has fewer. */
  at(k: number): Occurrence | null {
    if (k < 0) return null;
    // Back before what is listed, or far past it: the k-th is at rule position k or a few after (positions left out come before it).
    if (this.cadence && (k < this.from || (k > this.from + this.known.length + AHEAD && k > this.pos + AHEAD))) this.jump(k);
    this.fill((end) => end > k);
    return this.known[k - this.from] ?? null;
  }

  /** Index of the first occurrence starting at or after t, or null when none does. */
  indexAtOrAfter(t: number): number | null {
    if (this.cadence) {
      // The last rule position at or before t (an open or far-off bound is not jumped to).
      const before = () => (t < -LAST ? 0 : t > LAST ? null : this.positionAtOrAfter(t + 1) - 1);
      const last = this.known[this.known.length - 1];
      if (t < this.floor) this.jump(before() ?? 0);
      else if (!last || last.start < t) {
        const p = before();
        if (p !== null && p > this.pos + AHEAD) this.jump(p);
      }
    }
    this.fill(() => this.known.length > 0 && this.known[this.known.length - 1].start >= t);
    let lo = 0;
    let hi = this.known.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.known[mid].start < t) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.known.length ? this.from + lo : null;
  }

  /** How many occurrences the series has; for one without end, as many as are looked at (MAX_STEPS from its start). */
  size(): number {
    const c = this.cadence;
    if (c && c.end !== Infinity) return c.end - this.droppedBefore(c.end);
    if (c) this.jump(0);
    this.fill(() => false);
    return this.from + this.known.length;
  }

  /** Occurrences overlapping [from, to), at most `limit`. */
  between(from: number, to: number, limit = 100_000): Occurrence[] {
    const out: Occurrence[] = [];
    // An occurrence starting before `from` may still run into it: look back by the longest span the series has.
    let k = this.indexAtOrAfter(from - this.longest()) ?? this.from + this.known.length;
    for (; out.length < limit; k++) {
      const o = this.at(k);
      if (!o || o.start >= to) break;
      if (o.end > from || (o.end === o.start && o.start >= from)) out.push(o);
    }
    return out;
  }

  private longest(): number {
    let l = this.length;
    for (const o of this.overrides.values()) l = Math.max(l, lengthOf(o, this.zones));
    return l;
  }
}

/** A calendar object's series: its master component (the one without RECURRENCE-ID) and the overrides of its occurrences. */
export function seriesOf(cal: Comp, name = "vevent"): { master: Comp; overrides: Comp[] } | null {
  const comps = cal.getAllSubcomponents(name);
  const master = comps.find((c) => !c.hasProperty("recurrence-id"));
  if (!master) return null;
  return { master, overrides: comps.filter((c) => c !== master && c.hasProperty("recurrence-id")) };
}

const timelines = new Map<string, Timeline>();
const KEPT = 2000;

/**
 * The timeline of a schedule's rule text (a VCALENDAR holding its series),
 * kept per text and floating zone, so the scheduler and the calendar's reads
 * expand a series once per process rather than once per look.
 */
export function timelineOf(text: string, floating: Floating): Timeline | null {
  const key = `${floating.tz ?? ""}|${floating.offset}|${text}`;
  // What is kept here fires: cancelled occurrences are left out.
  let t = timelines.get(key);
  if (t) {
    // Most recently used last, so the oldest goes first when the cache is full.
    timelines.delete(key);
    timelines.set(key, t);
    return t;
  }
  const cal = new ICAL.Component(ICAL.parse(text) as unknown[]);
  const s = seriesOf(cal);
  if (!s) return null;
  t = new Timeline(s.master, s.overrides, new Zones(cal, floating));
  timelines.set(key, t);
  if (timelines.size > KEPT) timelines.delete(timelines.keys().next().value!);
  return t;
}
