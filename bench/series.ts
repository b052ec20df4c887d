// The first look at a long series: a daily event a calendar app wrote in
// 2000 (09:00 Europe/London), asked about in 2026 as the server asks on a
// cold process (nothing expanded, no zone offsets known yet). Each figure is
// CPU ms of one fresh process doing one thing:
//  - report: a calendar-query for one week of 2026 (time-range filter and
//    expand), as a phone asks when it opens that week;
//  - next: the scheduler's next firing (nextAtOrAfter), as a PUT or a start asks;
//  - free: events/free's busy spans for that week (spansBetween);
//  - count: the same series with COUNT=9999 (it ends in 2027), next firing.
// `bun bench/series.ts` prints a table; benchSeries() returns the numbers.
import { join } from "node:path";

const root = join(import.meta.dir, "..");

export const SERIES_KINDS = ["report", "next", "free", "count"] as const;
export type SeriesKind = (typeof SERIES_KINDS)[number];

const series = (extra: string[]) =>
  ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Bench//EN", "BEGIN:VEVENT", "UID:daily-2000", "DTSTAMP:20000101T000000Z", "DTSTART;TZID=Europe/London:20000101T090000", "DURATION:PT30M", ...extra, "SUMMARY:Standup", "END:VEVENT", "END:VCALENDAR", ""].join("\r\n");

/** What one cold process runs for a kind, and the answer it prints (checked, so a fast wrong answer is not a figure). */
function script(kind: SeriesKind): string {
  const q = (f: string) => JSON.stringify(join(root, f));
  const text = JSON.stringify(series(kind === "count" ? ["RRULE:FREQ=DAILY;COUNT=9999"] : ["RRULE:FREQ=DAILY"]));
  const week = { from: Date.UTC(2026, 5, 1), to: Date.UTC(2026, 5, 8) };
  const body = {
    report: `const { calendarMatches, expanded } = await import(${q("core/dav/query.ts")});
const { parseXml } = await import(${q("core/dav/xml.ts")});
const f = parseXml('<c:filter xmlns:c="urn:ietf:params:xml:ns:caldav"><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="20260601T000000Z" end="20260608T000000Z"/></c:comp-filter></c:comp-filter></c:filter>');
const t0 = process.cpuUsage();
const hit = calendarMatches(f, text, floating);
const n = (expanded(text, { start: ${week.from}, end: ${week.to} }, floating).match(/BEGIN:VEVENT/g) ?? []).length;
answer = { hit, n, cpu: process.cpuUsage(t0) };`,
    next: `const { nextAtOrAfter } = await import(${q("core/scheduler/recurrence.ts")});
const t0 = process.cpuUsage();
const next = nextAtOrAfter(r, ${week.from});
answer = { next: new Date(next).toISOString(), cpu: process.cpuUsage(t0) };`,
    free: `const { spansBetween } = await import(${q("core/scheduler/recurrence.ts")});
const t0 = process.cpuUsage();
const spans = spansBetween(r, ${week.from}, ${week.to}, 30 * 60_000);
answer = { spans: spans.length, first: new Date(spans[0].start).toISOString(), cpu: process.cpuUsage(t0) };`,
    count: `const { nextAtOrAfter, indexAtOrAfter } = await import(${q("core/scheduler/recurrence.ts")});
const t0 = process.cpuUsage();
const next = nextAtOrAfter(r, ${week.from});
const k = indexAtOrAfter(r, ${week.from});
answer = { next: new Date(next).toISOString(), k, cpu: process.cpuUsage(t0) };`,
  }[kind];
  return `const text = ${text};
const floating = { tz: "Europe/London", offset: 0 };
const r = { start: ${Date.UTC(2000, 0, 1, 9)}, offset: 0, repeat: "daily", tz: "Europe/London", rule: text };
let answer;
${body}
const { cpu, ...rest } = answer;
console.log(JSON.stringify({ cpuMs: Math.round((cpu.user + cpu.system) / 1000), answer: rest }));`;
}

export interface SeriesBench {
  kind: SeriesKind;
  /** CPU ms, the median of the runs. */
  cpuMs: number;
  runs: number[];
  answer: unknown;
}

export async function benchSeries(runs = Number(process.env.BENCH_SERIES_RUNS ?? 3)): Promise<SeriesBench[]> {
  const out: SeriesBench[] = [];
  for (const kind of SERIES_KINDS) {
    const cpu: number[] = [];
    let answer: unknown;
    for (let i = 0; i < runs; i++) {
      const p = Bun.spawn(["bun", "-e", script(kind)], { cwd: root, stdout: "pipe", stderr: "inherit" });
      const text = await new Response(p.stdout).text();
      if ((await p.exited) !== 0) throw new Error(`series bench ${kind} failed`);
      const r = JSON.parse(text.trim().split("\n").at(-1)!) as { cpuMs: number; answer: unknown };
      cpu.push(r.cpuMs);
      answer = r.answer;
    }
    cpu.sort((a, b) => a - b);
    out.push({ kind, cpuMs: cpu[cpu.length >> 1], runs: cpu, answer });
  }
  return out;
}

export function seriesTable(rows: SeriesBench[]): string {
  return ["a daily series from 2000, first look in 2026 | CPU ms (median) | runs | answer", ...rows.map((r) => `${r.kind} | ${r.cpuMs} | ${r.runs.join(", ")} | ${JSON.stringify(r.answer)}`)].join("\n");
}

if (import.meta.main) console.log(seriesTable(await benchSeries()));
