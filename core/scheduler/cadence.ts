// Where a plain rule's n-th occurrence falls, by arithmetic on its local
// time rather than by stepping ical.js through every occurrence before it. A
// daily series begun in 2000 and asked about in 2026 is 9,000 steps (seconds
// on a loaded machine) to step, and one division to jump. Only rules whose
// occurrences are a fixed pattern per period qualify (DAILY; WEEKLY, with
// plain BYDAY days; MONTHLY on a day every month has; YEARLY on a date every
// year has; any INTERVAL, COUNT and UNTIL); anything else is stepped as before
// (rule.ts). What the arithmetic gives is the rule's local times only: the
// zone, EXDATEs and overrides are applied where it is used, as for a step.
import ICAL from "ical.js";

type Comp = InstanceType<typeof ICAL.Component>;
type Time = InstanceType<typeof ICAL.Time>;
type Recur = InstanceType<typeof ICAL.Recur>;

const DAY = 86_400_000;
const WEEKDAYS = ["SU", "MO", "TU", "WE", "TH", "FR", "SA"];

export interface Cadence {
  /** The wall-clock time (as UTC fields) of the rule's n-th occurrence, from 0; the series' own end is not applied. */
  local(n: number): number;
  /** The same as ical.js's time, floating as the series is expanded (rule.ts). */
  time(n: number): Time;
  /** The smallest n whose local time is at or after the given one. */
  atOrAfterLocal(local: number): number;
  /** How many occurrences the rule has: COUNT's or UNTIL's end (Infinity when it has neither). */
  readonly end: number;
  /** The rule to expand from the n-th occurrence on (n < end): COUNT lowered by n, the rest as written. */
  ruleFrom(n: number): Recur;
}

/** The cadence of a series' one RRULE, or null when it is not a pattern arithmetic can follow exactly. */
export function cadenceOf(master: Comp, start: Time): Cadence | null {
  const rules = master.getAllProperties("rrule");
  if (rules.length !== 1 || master.hasProperty("rdate") || master.hasProperty("exrule")) return null;
  const rule = rules[0].getFirstValue() as Recur;
  const parts = (rule.parts ?? {}) as Record<string, unknown[]>;
  const names = Object.keys(parts).filter((k) => Array.isArray(parts[k]) && parts[k].length);
  const interval = rule.interval || 1;
  if (!Number.isInteger(interval) || interval < 1 || start.year < 1000) return null;
  const hms = start.isDate ? 0 : ((start.hour * 60 + start.minute) * 60 + start.second) * 1000;
  const l0 = Date.UTC(start.year, start.month - 1, start.day) + hms;
  const only = (allowed: string[]) => names.every((n) => allowed.includes(n));
  const single = (name: string, want: number) => !parts[name] || (parts[name].length === 1 && Number(parts[name][0]) === want);
  let local: (n: number) => number;
  switch (rule.freq) {
    case "DAILY":
      if (names.length) return null;
      local = (n) => l0 + n * interval * DAY;
      break;
    case "WEEKLY": {
      if (!only(["BYDAY"])) return null;
      const days = (parts.BYDAY ?? []).map((d) => WEEKDAYS.indexOf(String(d)));
      if (days.some((d) => d < 0)) return null;
      const dow = new Date(l0).getUTCDay();
      if (days.length && !days.includes(dow)) return null;
      // ical.js counts weeks from WKST (1 = Sunday, Monday unless the rule says).
      const wkst = (typeof rule.wkst === "number" ? rule.wkst : 2) - 1;
      const rel = (d: number) => (d - wkst + 7) % 7;
      const offs = [...new Set((days.length ? days : [dow]).map(rel))].sort((a, b) => a - b);
      const w0 = l0 - rel(dow) * DAY;
      const i0 = offs.indexOf(rel(dow));
      const first = offs.length - i0;
      local = (n) => {
        if (n < first) return w0 + offs[i0 + n] * DAY;
        const m = n - first;
        return w0 + (1 + Math.floor(m / offs.length)) * 7 * interval * DAY + offs[m % offs.length] * DAY;
      };
      break;
    }
    case "MONTHLY":
      // A day every month has: a rule on the 29th-31st skips months, which stepping knows.
      if (!only(["BYMONTHDAY"]) || !single("BYMONTHDAY", start.day) || start.day > 28) return null;
      local = (n) => Date.UTC(start.year, start.month - 1 + n * interval, start.day) + hms;
      break;
    case "YEARLY":
      if (!only(["BYMONTH", "BYMONTHDAY"]) || !single("BYMONTH", start.month) || !single("BYMONTHDAY", start.day) || (start.month === 2 && start.day === 29)) return null;
      local = (n) => Date.UTC(start.year + n * interval, start.month - 1, start.day) + hms;
      break;
    default:
      return null;
  }
  const time = (n: number) => {
    const d = new Date(local(n));
    if (start.isDate) return ICAL.Time.fromData({ year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), isDate: true });
    return ICAL.Time.fromData({ year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds(), isDate: false });
  };
  /** The smallest n >= lo for which ok(n) holds, ok being false then true as n grows. */
  const first = (ok: (n: number) => boolean, lo = 0) => {
    if (ok(lo)) return lo;
    let hi = Math.max(1, lo * 2);
    while (!ok(hi)) {
      // Past any date a calendar writes: taken as never.
      if (hi > 2 ** 31) return Infinity;
      lo = hi;
      hi *= 2;
    }
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (ok(mid)) hi = mid;
      else lo = mid;
    }
    return hi;
  };
  let end = rule.count ? rule.count : Infinity;
  // ical.js gives DTSTART whatever UNTIL says, and after it stops at the first local time past UNTIL, compared as it compares them.
  if (rule.until) end = Math.min(end, first((n) => time(n).compare(rule.until!) > 0, 1));
  return {
    local,
    time,
    end,
    atOrAfterLocal: (l) => (l <= l0 ? 0 : first((n) => local(n) >= l)),
    ruleFrom(n) {
      const r = rule.clone();
      if (r.count) r.count -= n;
      return r;
    },
  };
}
