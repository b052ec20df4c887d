// one store: the arithmetic of rule text alone; the same series through CalDAV, the scheduler and events/free on both stores are in test/dav/series.test.ts
// A series looked at far from its start jumps there (core/scheduler/cadence.ts)
// rather than stepping every occurrence before. What it finds must be what
// stepping finds, occurrence for occurrence and number for number: random
// rules (each frequency, intervals, BYDAY with any WKST, COUNT and UNTIL,
// EXDATEs, occurrences moved either way and cancelled, zones with clock
// changes, all-day and floating) are asked in a random order of far and near
// looks, and each answer is held against the series stepped from its start.
import { describe, expect, test } from "bun:test";
import ICAL from "ical.js";
import { Timeline, Zones, seriesOf, type Occurrence } from "../../core/scheduler/rule.ts";

/** A small seeded generator, so a failure names the case that made it. */
function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

const p2 = (n: number) => String(n).padStart(2, "0");
const stamp = (d: Date, date = false) => `${d.getUTCFullYear()}${p2(d.getUTCMonth() + 1)}${p2(d.getUTCDate())}${date ? "" : `T${p2(d.getUTCHours())}${p2(d.getUTCMinutes())}00`}`;
const DAY = 86_400_000;
const ZONES = ["Europe/London", "America/New_York", null] as const;

interface Case {
  text: string;
  skipCancelled: boolean;
}

function randomCase(seed: number): Case {
  const r = rng(seed);
  const pick = <T,>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
  const freq = pick(["DAILY", "WEEKLY", "WEEKLY", "MONTHLY", "YEARLY"] as const);
  const interval = 1 + Math.floor(r() * 3);
  const allDay = r() < 0.15;
  const tz = allDay ? null : pick(ZONES);
  // Starts from 2016 to 2019, at times near the clock changes' hours (01:30 falls in a gap or twice a year).
  const start = new Date(Date.UTC(2016 + Math.floor(r() * 4), Math.floor(r() * 12), 1 + Math.floor(r() * 28), pick([1, 2, 9, 23]), pick([0, 30])));
  const local = (d: Date) => (allDay ? `;VALUE=DATE:${stamp(d, true)}` : tz ? `;TZID=${tz}:${stamp(d)}` : `:${stamp(d)}`);
  const parts = [`FREQ=${freq}`];
  if (interval > 1) parts.push(`INTERVAL=${interval}`);
  if (freq === "WEEKLY" && r() < 0.6) {
    const days = ["SU", "MO", "TU", "WE", "TH", "FR", "SA"];
    const set = new Set([days[start.getUTCDay()]]);
    for (const d of days) if (r() < 0.3) set.add(d);
    parts.push(`BYDAY=${[...set].join(",")}`);
    if (r() < 0.5) parts.push(`WKST=${pick(days)}`);
  }
  if (freq === "MONTHLY" && r() < 0.5) parts.push(`BYMONTHDAY=${start.getUTCDate()}`);
  const period = { DAILY: DAY, WEEKLY: 7 * DAY, MONTHLY: 30 * DAY, YEARLY: 365 * DAY }[freq] * interval;
  const end = r();
  if (end < 0.3) parts.push(`COUNT=${1 + Math.floor(r() * Math.min(2500, (10 * 365 * DAY) / period))}`);
  else if (end < 0.6) parts.push(`UNTIL=${stamp(new Date(start.getTime() + r() * 9 * 365 * DAY))}${allDay ? "" : "Z"}`.replace(/^UNTIL=(\d{8})T\d{6}$/, "UNTIL=$1"));
  const uid = `case-${seed}`;
  const master = ["UID:" + uid, "DTSTAMP:20160101T000000Z", `DTSTART${local(start)}`, allDay ? "DURATION:P1D" : "DURATION:PT45M", `RRULE:${parts.join(";")}`, "SUMMARY:Case"];
  const near = (k: number) => {
    // A time the rule gives, by stepping the local time roughly (it may miss: an EXDATE or override on no occurrence is also a case).
    const d = new Date(start.getTime() + Math.round(k * (period / DAY)) * DAY);
    return d;
  };
  const exdates: string[] = [];
  for (let i = 0, n = Math.floor(r() * 6); i < n; i++) exdates.push(`EXDATE${local(near(Math.floor(r() * 400)))}`);
  master.push(...exdates);
  const overrides: string[][] = [];
  for (let i = 0, n = Math.floor(r() * 4); i < n; i++) {
    const at = near(Math.floor(r() * 400));
    const shift = pick([-3 * DAY, -2 * 3_600_000, 3 * 3_600_000, 5 * DAY, 40 * DAY]);
    const moved = new Date(at.getTime() + (allDay ? Math.round(shift / DAY) * DAY : shift));
    const o = ["UID:" + uid, "DTSTAMP:20160101T000000Z", `RECURRENCE-ID${local(at)}`, `DTSTART${local(moved)}`, "SUMMARY:Moved"];
    if (r() < 0.3) o.push("STATUS:CANCELLED");
    overrides.push(o);
  }
  const text = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Test//EN", "BEGIN:VEVENT", ...master, "END:VEVENT", ...overrides.flatMap((o) => ["BEGIN:VEVENT", ...o, "END:VEVENT"]), "END:VCALENDAR", ""].join("\r\n");
  return { text, skipCancelled: r() < 0.7 };
}

function timeline(c: Case): Timeline {
  const cal = new ICAL.Component(ICAL.parse(c.text) as unknown[]);
  const s = seriesOf(cal)!;
  return new Timeline(s.master, s.overrides, new Zones(cal, { tz: "Europe/London", offset: 0 }), c.skipCancelled);
}

const LIMIT = Date.UTC(2028, 0, 1);
const plain = (o: Occurrence | null) => (o ? { start: new Date(o.start).toISOString(), end: o.end - o.start, base: new Date(o.base).toISOString(), cancelled: o.cancelled } : null);

/** The series stepped from its start, through 2027 (a look one at a time from the first never jumps). */
function stepped(c: Case): { list: Occurrence[]; complete: boolean } {
  const t = timeline(c);
  const list: Occurrence[] = [];
  for (let k = 0; ; k++) {
    const o = t.at(k);
    if (!o) return { list, complete: true };
    if (o.start >= LIMIT + 60 * DAY) return { list, complete: false };
    list.push(o);
  }
}

describe("a series looked at far from its start", () => {
  test("gives the occurrences, and their numbers, that stepping from its start gives: 150 random series, each asked in a random order", () => {
    let jumpedLooks = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const c = randomCase(seed);
      const { list, complete } = stepped(c);
      const r = rng(seed * 7919);
      const t = timeline(c);
      const why = `seed ${seed}:\n${c.text}`;
      for (let q = 0; q < 12; q++) {
        const kind = r();
        if (kind < 0.35 && list.length) {
          const k = Math.floor(r() * (list.length + 3));
          if (k >= list.length && !complete) continue;
          expect({ why, k, o: plain(t.at(k)) }).toEqual({ why, k, o: plain(list[k] ?? null) });
        } else if (kind < 0.7) {
          const at = Date.UTC(2016, 0, 1) + Math.floor(r() * (LIMIT - Date.UTC(2016, 0, 1)));
          const want = list.findIndex((o) => o.start >= at);
          if (want < 0 && !complete) continue;
          expect({ why, at, k: t.indexAtOrAfter(at) }).toEqual({ why, at, k: want < 0 ? null : want });
        } else if (kind < 0.9) {
          const from = Date.UTC(2016, 0, 1) + Math.floor(r() * (LIMIT - Date.UTC(2016, 0, 1)));
          const to = from + Math.floor(r() * 20 * DAY);
          const want = list.filter((o) => (o.end > from || (o.end === o.start && o.start >= from)) && o.start < to);
          expect({ why, from, got: t.between(from, to).map(plain) }).toEqual({ why, from, got: want.map(plain) });
        } else if (complete) {
          expect({ why, size: t.size() }).toEqual({ why, size: list.length });
        }
        jumpedLooks++;
      }
    }
    expect(jumpedLooks).toBeGreaterThan(1000);
  });

  test("every other week on several days keeps its weeks from WKST (Sunday, Monday or Wednesday), as ical.js counts them", () => {
    for (const wkst of ["SU", "MO", "WE"])
      for (const start of ["20190106T090000", "20190107T090000", "20190109T090000"]) {
        const text = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Test//EN", "BEGIN:VEVENT", "UID:w", `DTSTART:${start}`, `RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=SU,MO,WE,FR;WKST=${wkst}`, "END:VEVENT", "END:VCALENDAR", ""].join("\r\n");
        const c = { text, skipCancelled: true };
        const step = timeline(c);
        const list = Array.from({ length: 600 }, (_, k) => plain(step.at(k)));
        const jumped = timeline(c);
        for (const k of [500, 3, 250, 599, 100]) expect({ wkst, start, k, o: plain(jumped.at(k)) }).toEqual({ wkst, start, k, o: list[k] });
      }
  });
});
