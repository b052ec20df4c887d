// Days and repeats in the person's own time zone (the browser's). events/list
// gives each event's start and repeat; the calendar draws every occurrence
// that falls in the days it shows, as the scheduler fires them: a repeat in
// the instance's zone keeps its local time across daylight-saving changes,
// one in a fixed offset keeps that offset.

export type Repeat = "hourly" | "daily" | "weekly" | "monthly";

export interface CalEvent {
  id: string;
  title: string;
  when: string;
  tz: string | null;
  note: string;
  minutes: number;
  repeat: Repeat | null;
  prompt: string | null;
  next: string | null;
  ends: string | null;
  history?: { at: string; status: string; reason?: string }[];
}

export interface Occurrence {
  event: CalEvent;
  start: Date;
  /** An hourly event, drawn once a day rather than 24 times. */
  hourly: boolean;
}

/** [from, to): local midnights. */
export interface Span {
  from: Date;
  to: Date;
}

const p2 = (n: number) => String(n).padStart(2, "0");

/** "2026-11-21" for the local day a moment falls on. */
export const dayKey = (d: Date) => `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())}`;

/** Local midnight of "2026-11-21", or null for anything else. */
export function parseDay(s: string | null): Date | null {
  const m = s ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(s) : null;
  if (!m) return null;
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return Number.isNaN(d.getTime()) || dayKey(d) !== s ? null : d;
}

/** The same local time n days later (a day is not always 24 hours). */
export function addDays(d: Date, n: number): Date {
  const x = new Date(d);
  x.setDate(x.getDate() + n);
  return x;
}

export function daysOf(span: Span): Date[] {
  const out: Date[] = [];
  for (let d = span.from; d < span.to; d = addDays(d, 1)) out.push(d);
  return out;
}

/** A moment as RFC 3339 in the person's offset then: 2026-11-21T09:00:00+01:00. */
export function withOffset(d: Date): string {
  const m = -d.getTimezoneOffset();
  const sign = m < 0 ? "-" : "+";
  return `${dayKey(d)}T${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}${sign}${p2(Math.floor(Math.abs(m) / 60))}:${p2(Math.abs(m) % 60)}`;
}

/** The k-th start of a repeating event from its first. */
function nth(e: CalEvent, first: Date, k: number): Date {
  const DAY = 86_400_000;
  // Without a zone the event keeps the fixed offset it was made in: whole days of 24 hours.
  const days = (n: number) => (e.tz ? addDays(first, n) : new Date(first.getTime() + n * DAY));
  if (e.repeat === "daily") return days(k);
  if (e.repeat === "weekly") return days(7 * k);
  // Monthly: the same day of the month, or the month's last day when it is shorter.
  const y = first.getFullYear();
  const m = first.getMonth() + k;
  const last = new Date(y, m + 1, 0).getDate();
  const d = new Date(first);
  d.setFullYear(y, m, Math.min(first.getDate(), last));
  return d;
}

/** Every occurrence that starts within the span, earliest first. */
export function occurrencesIn(events: CalEvent[], span: Span): Occurrence[] {
  const out: Occurrence[] = [];
  const from = span.from.getTime();
  const to = span.to.getTime();
  for (const e of events) {
    const first = new Date(Date.parse(e.when));
    if (Number.isNaN(first.getTime())) continue;
    if (!e.repeat) {
      if (first.getTime() >= from && first.getTime() < to) out.push({ event: e, start: first, hourly: false });
      continue;
    }
    if (e.repeat === "hourly") {
      // Once on each day from its first, at its first hour of the day.
      for (let d = new Date(Math.max(from, first.getTime())); d.getTime() < to; ) {
        const start = d.getTime() === first.getTime() ? first : new Date(d.getFullYear(), d.getMonth(), d.getDate(), 0, first.getMinutes());
        out.push({ event: e, start, hourly: true });
        d = new Date(d.getFullYear(), d.getMonth(), d.getDate() + 1);
      }
      continue;
    }
    // Start a little before the span (a month is at most 31 days, a week 7) and walk forward.
    const period = e.repeat === "daily" ? 1 : e.repeat === "weekly" ? 7 : 31;
    let k = Math.max(0, Math.floor((from - first.getTime()) / (period * 86_400_000)) - 1);
    for (let start = nth(e, first, k); start.getTime() < to; start = nth(e, first, ++k)) if (start.getTime() >= from) out.push({ event: e, start, hourly: false });
  }
  return out.sort((a, b) => a.start.getTime() - b.start.getTime());
}
