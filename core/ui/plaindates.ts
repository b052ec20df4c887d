// Dates in English written without Intl, for a page's first draw. A page's
// first Intl formatter costs a quarter of a second of a slow phone's CPU (the
// browser loads the language's data), most of what a calendar's first draw
// spent; for the shapes screens show most (a month's name, a weekday, a day,
// a time) in the languages whose words these are, the same text is written
// from the date's own fields. What it writes is checked against the
// browser's formatter off the page's thread (core/ui/dates.ts): a browser
// whose data says otherwise gets its formatter's text, drawn again.

type Plain = (d: Date) => string;

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const p2 = (n: number) => String(n).padStart(2, "0");

/** The key dates.ts keeps a formatter under: JSON of its options, in the order a view names them. */
export const optionsKey = (o: Intl.DateTimeFormatOptions) => JSON.stringify(o);

/** The plain writers for the page's language ("en", "en-US" or "en-GB"), keyed by options; null for any other. */
export function plainDates(lang: string): Map<string, Plain> | null {
  const us = lang === "en" || lang === "en-US";
  if (!us && lang !== "en-GB") return null;
  const month = (d: Date) => MONTHS[d.getMonth()]!;
  // British English shortens September to four letters.
  const shortMonth = (d: Date) => (!us && d.getMonth() === 8 ? "Sept" : month(d).slice(0, 3));
  const weekday = (d: Date) => DAYS[d.getDay()]!;
  const shortDay = (d: Date) => weekday(d).slice(0, 3);
  // An American 12-hour clock, its AM or PM after a space (Chromium's; a browser whose data has a narrow no-break
  // space there, as Firefox's does, has it corrected by the check).
  const time = us ? (d: Date) => `${p2(d.getHours() % 12 || 12)}:${p2(d.getMinutes())} ${d.getHours() < 12 ? "AM" : "PM"}` : (d: Date) => `${p2(d.getHours())}:${p2(d.getMinutes())}`;
  const ways: [Intl.DateTimeFormatOptions, Plain][] = [
    [{ month: "long", year: "numeric" }, (d) => `${month(d)} ${d.getFullYear()}`],
    [{ weekday: "short" }, shortDay],
    [{ weekday: "long" }, weekday],
    [{ weekday: "long", day: "numeric", month: "long", year: "numeric" }, us ? (d) => `${weekday(d)}, ${month(d)} ${d.getDate()}, ${d.getFullYear()}` : (d) => `${weekday(d)}, ${d.getDate()} ${month(d)} ${d.getFullYear()}`],
    [{ hour: "2-digit", minute: "2-digit" }, time],
    [{ weekday: "short", day: "numeric" }, us ? (d) => `${d.getDate()} ${shortDay(d)}` : (d) => `${shortDay(d)} ${d.getDate()}`],
    [{ day: "numeric", month: "short" }, us ? (d) => `${shortMonth(d)} ${d.getDate()}` : (d) => `${d.getDate()} ${shortMonth(d)}`],
    [{ day: "numeric", month: "short", year: "numeric" }, us ? (d) => `${shortMonth(d)} ${d.getDate()}, ${d.getFullYear()}` : (d) => `${d.getDate()} ${shortMonth(d)} ${d.getFullYear()}`],
    [
      { weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" },
      us ? (d) => `${shortDay(d)}, ${shortMonth(d)} ${d.getDate()}, ${time(d)}` : (d) => `${shortDay(d)} ${d.getDate()} ${shortMonth(d)}, ${time(d)}`,
    ],
    // The lists' "when": the short style's hour has no leading zero on a 12-hour clock.
    [
      { dateStyle: "medium", timeStyle: "short" },
      us
        ? (d) => `${shortMonth(d)} ${d.getDate()}, ${d.getFullYear()}, ${d.getHours() % 12 || 12}:${p2(d.getMinutes())} ${d.getHours() < 12 ? "AM" : "PM"}`
        : (d) => `${d.getDate()} ${shortMonth(d)} ${d.getFullYear()}, ${time(d)}`,
    ],
  ];
  return new Map(ways.map(([o, f]) => [optionsKey(o), f]));
}

/**
 * The dates a writer is checked on: a day in each month (twice), each hour of
 * the day, every weekday among them, minutes of one and two digits, as [y, m,
 * d, h, min] fields of local time.
 */
export function checkDates(): [number, number, number, number, number][] {
  return Array.from({ length: 24 }, (_, i) => [2026, i % 12, 1 + ((i * 5) % 28), i, (i * 7) % 60] as [number, number, number, number, number]);
}
