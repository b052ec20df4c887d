// The iCalendar (RFC 5545) feed of an account's events. Each event is given
// in its zone (with the zone's clock changes as a VTIMEZONE) or its own fixed
// UTC offset, so repeats expand on the same local time and month days the
// scheduler fires on.
import { escapeText, fold } from "hearth/dav";
import { occurrence, validZone, wallClock } from "hearth";
import ICAL from "ical.js";
import type { events } from "./schema.ts";
import { eventOffsetAt, vtimezone } from "./zone.ts";

type Row = typeof events.$inferSelect;

/** Februaries listed ahead of now for monthly events on the 29th or 30th; the feed is rebuilt on every fetch. */
const RDATE_YEARS = 10;
const YEAR = 366 * 86_400_000;

const p2 = (n: number) => String(n).padStart(2, "0");

const utcOffset = (offset: number) => `${offset < 0 ? "-" : "+"}${p2(Math.floor(Math.abs(offset) / 60))}${p2(Math.abs(offset) % 60)}`;
/** A parameter value may not hold a colon unquoted, so the zone is named "UTC+0100", not "UTC+01:00". */
const tzid = (offset: number) => `UTC${utcOffset(offset)}`;

function stamp(at: number, offset: number): string {
  const d = wallClock(at, offset);
  return `${d.getUTCFullYear()}${p2(d.getUTCMonth() + 1)}${p2(d.getUTCDate())}T${p2(d.getUTCHours())}${p2(d.getUTCMinutes())}${p2(d.getUTCSeconds())}`;
}

function dateTime(name: string, at: number, e: Row): string {
  if (e.tz) return `${name};TZID=${e.tz}:${stamp(at, eventOffsetAt(e, at))}`;
  return e.offset === 0 ? `${name}:${stamp(at, 0)}Z` : `${name};TZID=${tzid(e.offset)}:${stamp(at, e.offset)}`;
}

/**
 * Monthly on the 29th-31st falls on the last day of shorter months. The 31st
 * is simply the last day (BYMONTHDAY=-1). For the 29th and 30th a rule would
 * need BYSETPOS over BYMONTHDAY, which common clients ignore, so the rule
 * skips February and each February in range is listed as an RDATE.
 */
function repeatLines(e: Row, now: number): string[] {
  if (!e.repeat) return [];
  if (e.repeat !== "monthly") return [`RRULE:FREQ=${e.repeat.toUpperCase()}`];
  const w = wallClock(e.start, e.offset);
  const day = w.getUTCDate();
  if (day <= 28) return [`RRULE:FREQ=MONTHLY;BYMONTHDAY=${day}`];
  if (day === 31) return ["RRULE:FREQ=MONTHLY;BYMONTHDAY=-1"];
  const r = { start: e.start, offset: e.offset, repeat: e.repeat, tz: e.tz };
  const dates: string[] = [];
  const lastYear = wallClock(now, e.offset).getUTCFullYear() + RDATE_YEARS;
  for (let y = w.getUTCFullYear(); y <= lastYear; y++) {
    const k = (y - w.getUTCFullYear()) * 12 + 1 - w.getUTCMonth();
    if (k > 0 && new Date(Date.UTC(y, 2, 0)).getUTCDate() < day) {
      const at = occurrence(r, k);
      dates.push(stamp(at, eventOffsetAt(e, at)));
    }
  }
  const lines = [`RRULE:FREQ=MONTHLY;BYMONTHDAY=${day}`];
  if (dates.length)
    lines.push(e.tz ? `RDATE;TZID=${e.tz}:${dates.join(",")}` : e.offset === 0 ? `RDATE:${dates.map((d) => `${d}Z`).join(",")}` : `RDATE;TZID=${tzid(e.offset)}:${dates.join(",")}`);
  return lines;
}

/** The TZIDs a series' times name. */
const ruleZones = (rule: string) => [...new Set([...rule.matchAll(/;TZID=("[^"]*"|[^:;]+)/g)].map((m) => m[1].replace(/^"|"$/g, "")))];

function ruleVtimezone(rule: string, id: string): string[] {
  const tz = new ICAL.Component(ICAL.parse(rule) as unknown[]).getAllSubcomponents("vtimezone").find((c) => String(c.getFirstPropertyValue("tzid")) === id);
  return tz ? tz.toString().split(/\r?\n/) : [];
}

/** A series as its calendar app wrote its times (the rule, its dates left out, its changed occurrences), with what the event keeps. */
function ruleEvents(lines: string[], e: Row, o: { host: string; now: number; uid?: string }) {
  const cal = new ICAL.Component(ICAL.parse(e.rule!) as unknown[]);
  const comps = cal.getAllSubcomponents("vevent").sort((a, b) => Number(a.hasProperty("recurrence-id")) - Number(b.hasProperty("recurrence-id")));
  for (const c of comps) {
    lines.push("BEGIN:VEVENT", `UID:${o.uid ? escapeText(o.uid) : `${e.id}@${o.host}`}`, `DTSTAMP:${stamp(o.now, 0)}Z`, `CREATED:${stamp(e.created, 0)}Z`);
    for (const p of c.getAllProperties()) if (p.name !== "uid") lines.push(p.toICALString());
    lines.push(`SUMMARY:${escapeText(e.title)}`);
    if (e.note) lines.push(`DESCRIPTION:${escapeText(e.note)}`);
    if (o.uid) lines.push("BEGIN:VALARM", "ACTION:DISPLAY", `DESCRIPTION:${escapeText(e.title)}`, "TRIGGER:PT0S", "END:VALARM");
    lines.push("END:VEVENT");
  }
}

/**
 * The feed (a name, METHOD:PUBLISH), or with `uid` one event as a CalDAV
 * object: the UID its client gave it, and the alarm that stands for its firing.
 */
export function renderCalendar(o: { name?: string; host: string; events: Row[]; now: number; uid?: string }): string {
  const lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Hearth//events//EN", "CALSCALE:GREGORIAN"];
  if (o.name !== undefined) lines.push("METHOD:PUBLISH", `X-WR-CALNAME:${escapeText(o.name)}`);
  // Each zone's clock changes from a year before its first event (at most five years back) to as far ahead as the feed lists dates.
  const zones = new Map<string, number>();
  for (const e of o.events) if (e.tz) zones.set(e.tz, Math.min(zones.get(e.tz) ?? Infinity, e.start));
  // A series a calendar app wrote names its zones itself: an IANA one is written out like the others, any other as the app described it.
  const described = new Map<string, string[]>();
  for (const e of o.events)
    for (const id of e.rule ? ruleZones(e.rule) : []) {
      if (validZone(id) === id) zones.set(id, Math.min(zones.get(id) ?? Infinity, e.start));
      else if (!described.has(id)) described.set(id, ruleVtimezone(e.rule!, id));
    }
  for (const block of described.values()) lines.push(...block);
  for (const [tz, first] of [...zones].sort(([a], [b]) => a.localeCompare(b))) lines.push(...vtimezone(tz, Math.max(first, o.now - 5 * YEAR) - YEAR, o.now + (RDATE_YEARS + 1) * YEAR));
  for (const offset of [...new Set(o.events.filter((e) => !e.tz).map((e) => e.offset))].filter((x) => x !== 0).sort((a, b) => a - b)) {
    lines.push(
      "BEGIN:VTIMEZONE",
      `TZID:${tzid(offset)}`,
      "BEGIN:STANDARD",
      "DTSTART:19700101T000000",
      `TZOFFSETFROM:${utcOffset(offset)}`,
      `TZOFFSETTO:${utcOffset(offset)}`,
      `TZNAME:${tzid(offset)}`,
      "END:STANDARD",
      "END:VTIMEZONE",
    );
  }
  for (const e of o.events) {
    if (e.rule) {
      ruleEvents(lines, e, o);
      continue;
    }
    lines.push("BEGIN:VEVENT", `UID:${o.uid ? escapeText(o.uid) : `${e.id}@${o.host}`}`, `DTSTAMP:${stamp(o.now, 0)}Z`, `CREATED:${stamp(e.created, 0)}Z`);
    lines.push(dateTime("DTSTART", e.start, e), dateTime("DTEND", e.start + e.minutes * 60_000, e));
    lines.push(`SUMMARY:${escapeText(e.title)}`);
    if (e.note) lines.push(`DESCRIPTION:${escapeText(e.note)}`);
    lines.push(...repeatLines(e, o.now));
    // An event fires at its start: that is the reminder a calendar app should show.
    if (o.uid) lines.push("BEGIN:VALARM", "ACTION:DISPLAY", `DESCRIPTION:${escapeText(e.title)}`, "TRIGGER:PT0S", "END:VALARM");
    lines.push("END:VEVENT");
  }
  lines.push("END:VCALENDAR");
  return lines.map((l) => fold(l)).join("\r\n") + "\r\n";
}
