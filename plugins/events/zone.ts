// The time zone of an event. The spec gives events/create no zone argument,
// so the zone is the instance's (HEARTH_TZ, else TZ): an event whose `when`
// carries the offset that zone has at that moment is taken to be in it, and
// its repeats keep their local time across daylight-saving changes. A time
// given in another offset, or in "Z" (UTC itself), keeps that fixed offset.
import { validZone, zoneOffset, type ParsedTime } from "hearth";

/** The instance's zone: HEARTH_TZ, else TZ when it names an IANA zone; null when neither does. */
export function instanceZone(config: Readonly<Record<string, string>>): string | null {
  return validZone(config.HEARTH_TZ) ?? validZone(config.TZ);
}

/** The zone a new event is in: the instance's, when `when` was written in that zone's offset at that instant. */
export function zoneOfTime(config: Readonly<Record<string, string>>, when: Extract<ParsedTime, { ok: true }>): string | null {
  const tz = instanceZone(config);
  if (!tz || when.zulu) return null;
  return zoneOffset(tz, when.at) === when.offset ? tz : null;
}

/** An event's IANA zone (e.g. for a calendar's TZID), or null when it keeps the fixed offset it was given in. */
export function eventZone(e: { tz: string | null }): string | null {
  return e.tz;
}

/** Minutes east of UTC of an event's local time at an instant: its zone's offset then, or its fixed offset. */
export function eventOffsetAt(e: { tz: string | null; offset: number }, at: number): number {
  return e.tz ? zoneOffset(e.tz, at) : e.offset;
}

const DAY = 86_400_000;
const p2 = (n: number) => String(n).padStart(2, "0");
const icsOffset = (offset: number) => `${offset < 0 ? "-" : "+"}${p2(Math.floor(Math.abs(offset) / 60))}${p2(Math.abs(offset) % 60)}`;
const icsLocal = (at: number, offset: number) => {
  const d = new Date(at + offset * 60_000);
  return `${d.getUTCFullYear()}${p2(d.getUTCMonth() + 1)}${p2(d.getUTCDate())}T${p2(d.getUTCHours())}${p2(d.getUTCMinutes())}${p2(d.getUTCSeconds())}`;
};

/** The instants in [from, to) at which the zone's clocks change, to the minute, with the offsets either side. */
export function zoneChanges(tz: string, from: number, to: number): { at: number; before: number; after: number }[] {
  const out: { at: number; before: number; after: number }[] = [];
  let t = from;
  let offset = zoneOffset(tz, t);
  while (t < to) {
    const next = Math.min(t + DAY, to);
    const o = zoneOffset(tz, next);
    if (o !== offset) {
      // The change is within this day: narrow it to the minute.
      let lo = t;
      let hi = next;
      while (hi - lo > 60_000) {
        const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
        if (zoneOffset(tz, mid) === offset) lo = mid;
        else hi = mid;
      }
      out.push({ at: hi, before: offset, after: o });
      offset = o;
    }
    t = next;
  }
  return out;
}

/**
 * An iCalendar VTIMEZONE for an IANA zone, listing its clock changes between
 * two instants, so a calendar expands repeats in the zone as the scheduler
 * fires them (RFC 5545 3.6.5: each observance starts at its local time in the
 * offset it changes from).
 */
export function vtimezone(tz: string, from: number, to: number): string[] {
  const first = zoneOffset(tz, from);
  const lines = ["BEGIN:VTIMEZONE", `TZID:${tz}`, "BEGIN:STANDARD", `DTSTART:${icsLocal(from, first)}`, `TZOFFSETFROM:${icsOffset(first)}`, `TZOFFSETTO:${icsOffset(first)}`, "END:STANDARD"];
  for (const c of zoneChanges(tz, from, to)) {
    const kind = c.after > c.before ? "DAYLIGHT" : "STANDARD";
    lines.push(`BEGIN:${kind}`, `DTSTART:${icsLocal(c.at, c.before)}`, `TZOFFSETFROM:${icsOffset(c.before)}`, `TZOFFSETTO:${icsOffset(c.after)}`, `END:${kind}`);
  }
  lines.push("END:VTIMEZONE");
  return lines;
}
