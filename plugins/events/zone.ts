// The time zone of an event. The spec gives events/create no zone argument,
// so the zone is the instance's (HEARTH_TZ, else TZ): an event whose `when`
// carries the offset that zone has at that moment is taken to be in it, and
// its repeats keep their local time across daylight-saving changes. A time
// given in another offset, or in "Z" (UTC itself), keeps that fixed offset.
import { validZone, zoneOffset, type ParsedTime } from "../../core/scheduler/recurrence.ts";

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
