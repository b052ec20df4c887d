// IANA time zones through the runtime's Intl: whether a name is one, the
// offset its clocks show at an instant, and the instant they show a local time.
const DAY = 86_400_000;

const zoneFormats = new Map<string, Intl.DateTimeFormat>();
function zoneFormat(tz: string): Intl.DateTimeFormat {
  let f = zoneFormats.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", { timeZone: tz, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric" });
    zoneFormats.set(tz, f);
  }
  return f;
}

/** The IANA zone's canonical name when the runtime knows it (Europe/London), else null. */
export function validZone(name: string | undefined | null): string | null {
  const n = name?.trim();
  if (!n) return null;
  // Making a formatter takes about a millisecond, and a series' every local time asks; the answers are few and kept.
  const known = zoneNames.get(n);
  if (known !== undefined) return known;
  let found: string | null;
  try {
    found = new Intl.DateTimeFormat("en-US", { timeZone: n }).resolvedOptions().timeZone;
  } catch {
    found = null;
  }
  if (zoneNames.size < 10_000) zoneNames.set(n, found);
  return found;
}
const zoneNames = new Map<string, string | null>();

/** Minutes east of UTC that the zone's clocks show at an instant, as Intl says. */
function offsetNow(tz: string, at: number): number {
  const parts: Record<string, number> = {};
  for (const p of zoneFormat(tz).formatToParts(new Date(at))) if (p.type !== "literal") parts[p.type] = Number(p.value);
  const local = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  return Math.round((local - Math.floor(at / 1000) * 1000) / 60_000);
}

/** A zone's offsets through one UTC year: from each start (ms) on, the offset beside it. */
interface YearTable {
  starts: number[];
  offsets: number[];
}
const yearTables = new Map<string, YearTable>();
const KEPT_YEARS = 5000;

/**
 * The zone's clock changes in a year, found once: its offset each day, and
 * where two days differ, the second it changed (zones change at most once a
 * day). A series read across years asks for thousands of local times; each is
 * then a lookup rather than several calls into Intl.
 */
function yearTable(tz: string, year: number): YearTable {
  const key = `${tz}|${year}`;
  let t = yearTables.get(key);
  if (t) return t;
  const from = Date.UTC(year, 0, 1);
  const to = Date.UTC(year + 1, 0, 1);
  t = { starts: [from], offsets: [offsetNow(tz, from)] };
  let lo = from;
  for (let at = from + DAY; lo < to; at = Math.min(at + DAY, to)) {
    const sample = at === to ? to - 1000 : at;
    const o = offsetNow(tz, sample);
    if (o !== t.offsets[t.offsets.length - 1]) {
      // Narrowed to the second: offsets are read on whole seconds.
      let a = lo;
      let b = sample;
      while (b - a > 1000) {
        const mid = a + Math.floor((b - a) / 2000) * 1000;
        if (offsetNow(tz, mid) === t.offsets[t.offsets.length - 1]) a = mid;
        else b = mid;
      }
      t.starts.push(b);
      t.offsets.push(o);
    }
    lo = at;
  }
  if (yearTables.size >= KEPT_YEARS) yearTables.delete(yearTables.keys().next().value!);
  yearTables.set(key, t);
  return t;
}

/** Minutes east of UTC that the zone's clocks show at an instant. */
export function zoneOffset(tz: string, at: number): number {
  const t = yearTable(tz, new Date(at).getUTCFullYear());
  const s = Math.floor(at / 1000) * 1000;
  let i = t.starts.length - 1;
  while (i > 0 && t.starts[i] > s) i--;
  return t.offsets[i];
}

/**
 * The instant the zone's clocks show a wall-clock time (given as UTC fields).
 * A time the clocks skip (a spring-forward gap) comes out the gap's length
 * later; a time they show twice is taken at its first showing.
 */
export function fromZoneLocal(tz: string, local: number): number {
  // The offsets a day either side: a zone changes its clocks at most once in between.
  const before = local - zoneOffset(tz, local - DAY) * 60_000;
  const after = local - zoneOffset(tz, local + DAY) * 60_000;
  const shows = (at: number) => at + zoneOffset(tz, at) * 60_000 === local;
  const found = [before, after].filter(shows);
  // In a gap neither instant shows the time: the offset before the change pushes it forward by the gap.
  return found.length ? Math.min(...found) : before;
}

