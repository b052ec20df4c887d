// GTFS clock times ("25:10:00" is ten past one the next morning on the same
// service day) and service days in a feed's own time zone.

export function secondsOf(t: string | undefined): number | null {
  if (!t) return null;
  const m = /^(\d{1,2}):(\d{2}):(\d{2})$/.exec(t.trim());
  return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) : null;
}

/** The calendar date (YYYYMMDD), weekday (0 Monday) and seconds since midnight at an instant in a time zone. */
export function localNow(at: Date, timeZone: string): { date: string; weekday: number; seconds: number } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-GB", { timeZone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", weekday: "short", hourCycle: "h23" })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  const weekday = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].indexOf(parts.weekday);
  return { date: `${parts.year}${parts.month}${parts.day}`, weekday, seconds: Number(parts.hour) * 3600 + Number(parts.minute) * 60 + Number(parts.second) };
}

/** The day before a YYYYMMDD date, and its weekday. */
export function dayBefore(date: string, weekday: number): { date: string; weekday: number } {
  const d = new Date(Date.UTC(Number(date.slice(0, 4)), Number(date.slice(4, 6)) - 1, Number(date.slice(6, 8)) - 1));
  return { date: d.toISOString().slice(0, 10).replace(/-/g, ""), weekday: (weekday + 6) % 7 };
}

/** The instant a GTFS time on a service day falls at in a time zone (service days start at local noon minus 12 hours). */
export function instantOf(date: string, seconds: number, timeZone: string): Date {
  const noonUtc = Date.UTC(Number(date.slice(0, 4)), Number(date.slice(4, 6)) - 1, Number(date.slice(6, 8)), 12);
  // The zone's offset at local noon on that day, found by formatting noon UTC back into the zone.
  const local = localNow(new Date(noonUtc), timeZone);
  const offsetS = local.seconds - 12 * 3600 + (local.date === date ? 0 : local.date > date ? 86400 : -86400);
  return new Date(noonUtc - offsetS * 1000 - 12 * 3600 * 1000 + seconds * 1000);
}

export const isoDate = (yyyymmdd: string) => `${yyyymmdd.slice(0, 4)}-${yyyymmdd.slice(4, 6)}-${yyyymmdd.slice(6, 8)}`;
