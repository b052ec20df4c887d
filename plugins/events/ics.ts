// The iCalendar (RFC 5545) feed of an account's events. Each event keeps its
// own fixed UTC offset as a VTIMEZONE, so repeats expand on the same
// wall-clock time and month days the scheduler fires on.
import { wallClock } from "../../core/scheduler/recurrence.ts";
import type { events } from "./schema.ts";

type Row = typeof events.$inferSelect;

const p2 = (n: number) => String(n).padStart(2, "0");

/** TEXT values escape backslash, semicolon, comma and line breaks (RFC 5545 3.3.11). */
export function escapeText(s: string): string {
  return s.replace(/\\/g, "\\\\").replace(/;/g, "\\;").replace(/,/g, "\\,").replace(/\r?\n|\r/g, "\\n");
}

/** Folds a content line at 75 octets without splitting a UTF-8 character (RFC 5545 3.1). */
export function fold(line: string): string {
  const enc = new TextEncoder();
  if (enc.encode(line).length <= 75) return line;
  const parts: string[] = [];
  let cur = "";
  let size = 0;
  for (const ch of line) {
    const n = enc.encode(ch).length;
    const limit = parts.length === 0 ? 75 : 74;
    if (size + n > limit) {
      parts.push(cur);
      cur = "";
      size = 0;
    }
    cur += ch;
    size += n;
  }
  parts.push(cur);
  return parts.join("\r\n ");
}

const tzid = (offset: number) => `UTC${offset < 0 ? "-" : "+"}${p2(Math.floor(Math.abs(offset) / 60))}:${p2(Math.abs(offset) % 60)}`;
const utcOffset = (offset: number) => `${offset < 0 ? "-" : "+"}${p2(Math.floor(Math.abs(offset) / 60))}${p2(Math.abs(offset) % 60)}`;

function stamp(at: number, offset: number): string {
  const d = wallClock(at, offset);
  return `${d.getUTCFullYear()}${p2(d.getUTCMonth() + 1)}${p2(d.getUTCDate())}T${p2(d.getUTCHours())}${p2(d.getUTCMinutes())}${p2(d.getUTCSeconds())}`;
}

function dateTime(name: string, at: number, offset: number): string {
  return offset === 0 ? `${name}:${stamp(at, 0)}Z` : `${name};TZID=${tzid(offset)}:${stamp(at, offset)}`;
}

/** Monthly on the 29th-31st means the month's last day when it is shorter: the last of those days that exists. */
function rrule(e: Row): string | null {
  if (!e.repeat) return null;
  if (e.repeat !== "monthly") return `RRULE:FREQ=${e.repeat.toUpperCase()}`;
  const day = wallClock(e.start, e.offset).getUTCDate();
  if (day <= 28) return `RRULE:FREQ=MONTHLY;BYMONTHDAY=${day}`;
  const days = [];
  for (let d = 28; d <= day; d++) days.push(d);
  return `RRULE:FREQ=MONTHLY;BYMONTHDAY=${days.join(",")};BYSETPOS=-1`;
}

export function renderCalendar(o: { name: string; host: string; events: Row[]; now: number }): string {
  const lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Hearth//events//EN", "CALSCALE:GREGORIAN", "METHOD:PUBLISH", `X-WR-CALNAME:${escapeText(o.name)}`];
  for (const offset of [...new Set(o.events.map((e) => e.offset))].filter((x) => x !== 0).sort((a, b) => a - b)) {
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
    lines.push("BEGIN:VEVENT", `UID:${e.id}@${o.host}`, `DTSTAMP:${stamp(o.now, 0)}Z`, `CREATED:${stamp(e.created, 0)}Z`);
    lines.push(dateTime("DTSTART", e.start, e.offset), dateTime("DTEND", e.start + e.minutes * 60_000, e.offset));
    lines.push(`SUMMARY:${escapeText(e.title)}`);
    if (e.note) lines.push(`DESCRIPTION:${escapeText(e.note)}`);
    const rule = rrule(e);
    if (rule) lines.push(rule);
    lines.push("END:VEVENT");
  }
  lines.push("END:VCALENDAR");
  return lines.map(fold).join("\r\n") + "\r\n";
}
