// Times with a fixed UTC offset, and the arithmetic of repeating schedules.
// A schedule keeps the wall-clock time of its first occurrence: in its IANA
// time zone when it has one, so "daily at 09:00 Europe/London" stays at 09:00
// on both sides of a daylight-saving change; otherwise in the fixed offset it
// was given in, so "daily at 09:00+01:00" stays at 09:00+01:00. A monthly
// schedule on the 29th-31st falls on the last day of shorter months.

import { timelineOf } from "./rule.ts";
import { fromZoneLocal, zoneOffset } from "./zone.ts";

export { fromZoneLocal, validZone, zoneOffset } from "./zone.ts";

export const REPEATS = ["hourly", "daily", "weekly", "monthly"] as const;
export type Repeat = (typeof REPEATS)[number];

/** A repeating (or one-off, when repeat is null) schedule: instants are UTC milliseconds, offset is minutes east of UTC. */
export interface Recurrence {
  start: number;
  offset: number;
  repeat: Repeat | null;
  /** IANA zone whose local time daily, weekly and monthly repeats keep; absent or null: the fixed offset. Hourly repeats are a fixed hour apart either way. */
  tz?: string | null;
  /**
   * The series as RFC 5545 text (a VCALENDAR: DTSTART, RRULE, RDATE, EXDATE,
   * overrides), for what `repeat` cannot say; when present it alone decides
   * the occurrences (rule.ts), its floating times read in tz or offset.
   */
  rule?: string | null;
}

/** The expanded series of a schedule given as text, or null for the repeats above. */
function timeline(r: Recurrence) {
  if (!r.rule) return null;
  const t = timelineOf(r.rule, { tz: r.tz, offset: r.offset });
  if (!t) throw new Error("a schedule's rule holds no series");
  return t;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const fixedPeriod: Record<Exclude<Repeat, "monthly">, number> = { hourly: HOUR, daily: DAY, weekly: 7 * DAY };

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?$/;

/** `zulu`: the time was written with "Z", which names UTC itself rather than a local offset. */
export type ParsedTime = { ok: true; at: number; offset: number; zulu: boolean } | { ok: false; reason: string };

const daysIn = (year: number, month0: number) => new Date(Date.UTC(year, month0 + 1, 0)).getUTCDate();

/**
 * Parses an RFC 3339 date-time that carries its UTC offset. A time without
 * one is refused rather than guessed, since the server's zone is not the
 * caller's. Fractions of a second are dropped: schedules fire on seconds.
 */
export function parseTime(text: string): ParsedTime {
  const m = RFC3339.exec(text.trim());
  const example = "e.g. 2026-11-21T09:00:00+01:00 or 2026-11-21T08:00:00Z";
  if (!m) return { ok: false, reason: `must be an RFC 3339 date-time with an offset, ${example} (got ${JSON.stringify(text)})` };
  if (!m[8]) return { ok: false, reason: `needs a timezone offset (Z or ±hh:mm), ${example} (got ${JSON.stringify(text)})` };
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0));
  if (year < 1900) return { ok: false, reason: `has year ${year}; years before 1900 are not scheduled` };
  if (month < 1 || month > 12) return { ok: false, reason: `has month ${month}; months run 1-12` };
  if (day < 1 || day > daysIn(year, month - 1)) return { ok: false, reason: `has day ${day}, but ${m[1]}-${m[2]} has ${daysIn(year, month - 1)} days` };
  if (hour > 23 || minute > 59 || second > 59) return { ok: false, reason: `has an impossible time of day ${m[4]}:${m[5]}:${m[6] ?? "00"}` };
  let offset = 0;
  const z = m[8];
  if (z !== "Z" && z !== "z") {
    const digits = z.replace(":", "");
    const oh = Number(digits.slice(1, 3));
    const om = Number(digits.slice(3, 5));
    if (oh > 23 || om > 59) return { ok: false, reason: `has an impossible offset ${z}` };
    offset = (z[0] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const at = Date.UTC(year, month - 1, day, hour, minute, second) - offset * 60_000;
  return { ok: true, at, offset, zulu: z === "Z" || z === "z" };
}

/** Formats an instant as RFC 3339 in the given offset ("Z" for UTC). */
export function formatTime(at: number, offset: number): string {
  const d = new Date(at + offset * 60_000);
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  const base = `${p(d.getUTCFullYear(), 4)}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}T${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`;
  if (offset === 0) return `${base}Z`;
  const a = Math.abs(offset);
  return `${base}${offset < 0 ? "-" : "+"}${p(Math.floor(a / 60))}:${p(a % 60)}`;
}

/** The wall-clock fields of an instant in an offset (UTC getters on the shifted instant). */
export function wallClock(at: number, offset: number): Date {
  return new Date(at + offset * 60_000);
}

/** The k-th occurrence (k >= 0) of a schedule. */
export function occurrence(r: Recurrence, k: number): number {
  const tl = timeline(r);
  if (tl) return tl.at(k)?.start ?? Number.POSITIVE_INFINITY;
  if (k === 0 || r.repeat === null) return r.start;
  if (r.repeat === "hourly") return r.start + k * HOUR;
  const zoned = r.tz ? r.tz : null;
  // Wall-clock arithmetic on the start's local time, then back to an instant in the zone (or the fixed offset).
  const offset = zoned ? zoneOffset(zoned, r.start) : r.offset;
  const local = r.start + offset * 60_000;
  let at: number;
  if (r.repeat !== "monthly") at = local + k * fixedPeriod[r.repeat];
  else {
    const w = new Date(local);
    const months = w.getUTCMonth() + k;
    const year = w.getUTCFullYear() + Math.floor(months / 12);
    const month = ((months % 12) + 12) % 12;
    const day = Math.min(w.getUTCDate(), daysIn(year, month));
    at = Date.UTC(year, month, day) + (local - Date.UTC(w.getUTCFullYear(), w.getUTCMonth(), w.getUTCDate()));
  }
  return zoned ? fromZoneLocal(zoned, at) : at - offset * 60_000;
}

/** Moves an estimated index to the first occurrence at or after t. */
function settle(r: Recurrence, t: number, estimate: number): number {
  let k = Math.max(0, estimate);
  while (k > 0 && occurrence(r, k - 1) >= t) k--;
  while (occurrence(r, k) < t) k++;
  return k;
}

/** Index of the first occurrence at or after t; null when a one-off is already past. */
export function indexAtOrAfter(r: Recurrence, t: number): number | null {
  const tl = timeline(r);
  if (tl) return tl.indexAtOrAfter(t);
  if (t <= r.start) return 0;
  if (r.repeat === null) return null;
  if (r.repeat !== "monthly") {
    const k = Math.ceil((t - r.start) / fixedPeriod[r.repeat]);
    // In a zone, days are 23 or 25 hours long across a change: the estimate is then off by one either way.
    return r.tz && r.repeat !== "hourly" ? settle(r, t, k) : k;
  }
  const a = wallClock(r.start, r.offset);
  const b = wallClock(t, r.offset);
  // The month difference is right or one too many; step to the exact index.
  return settle(r, t, (b.getUTCFullYear() - a.getUTCFullYear()) * 12 + b.getUTCMonth() - a.getUTCMonth() - 1);
}

/** Index of the last occurrence at or before t; null when none has happened yet. */
export function indexAtOrBefore(r: Recurrence, t: number): number | null {
  const tl = timeline(r);
  if (tl) {
    const after = tl.indexAtOrAfter(t + 1);
    const k = after === null ? (tl.at(0) === null ? -1 : lastIndex(tl)) : after - 1;
    return k < 0 ? null : k;
  }
  if (t < r.start) return null;
  if (r.repeat === null) return 0;
  if (r.repeat === "hourly" || (r.repeat !== "monthly" && !r.tz)) return Math.floor((t - r.start) / fixedPeriod[r.repeat]);
  const k = indexAtOrAfter(r, t)!;
  return occurrence(r, k) === t ? k : k - 1;
}

/** Index of a finite series' last occurrence (indexAtOrAfter found none after t, so it ends). */
function lastIndex(tl: NonNullable<ReturnType<typeof timeline>>): number {
  return tl.size() - 1;
}

/** The k-th occurrence, or null when the schedule has fewer than k + 1. */
export function occurrenceOrNull(r: Recurrence, k: number): number | null {
  if (r.rule) return timeline(r)!.at(k)?.start ?? null;
  if (r.repeat === null) return k === 0 ? r.start : null;
  return occurrence(r, k);
}

/** First occurrence at or after t, or null. */
export function nextAtOrAfter(r: Recurrence, t: number): number | null {
  const k = indexAtOrAfter(r, t);
  return k === null ? null : occurrence(r, k);
}

/** First occurrence strictly after t, or null. */
export function nextAfter(r: Recurrence, t: number): number | null {
  return nextAtOrAfter(r, t + 1);
}

/**
 * Occurrences that overlap [from, to), as spans: each `length` ms long, or,
 * for a series given as text, as long as the series or the override that
 * moved it says (a meeting moved and made longer is busy all that time).
 */
export function spansBetween(r: Recurrence, from: number, to: number, length: number): { start: number; end: number }[] {
  const tl = timeline(r);
  if (tl) return tl.between(from, to).map((o) => ({ start: o.start, end: o.end }));
  return occurrencesBetween(r, from - length + 1, to).map((start) => ({ start, end: start + length }));
}

/** Occurrences starting in [from, to), at most `limit` of them. */
export function occurrencesBetween(r: Recurrence, from: number, to: number, limit = 100_000): number[] {
  const out: number[] = [];
  const tl = timeline(r);
  if (tl) {
    for (let k = tl.indexAtOrAfter(from); k !== null && out.length < limit; k++) {
      const o = tl.at(k);
      if (!o || o.start >= to) break;
      out.push(o.start);
    }
    return out;
  }
  let k = indexAtOrAfter(r, from);
  if (k === null) return out;
  for (; out.length < limit; k++) {
    const at = occurrence(r, k);
    if (at >= to) break;
    out.push(at);
    if (r.repeat === null) break;
  }
  return out;
}
