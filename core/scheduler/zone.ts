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

/** Minutes east of UTC that the zone's clocks show at an instant. */
export function zoneOffset(tz: string, at: number): number {
  const parts: Record<string, number> = {};
  for (const p of zoneFormat(tz).formatToParts(new Date(at))) if (p.type !== "literal") parts[p.type] = Number(p.value);
  const local = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  return Math.round((local - Math.floor(at / 1000) * 1000) / 60_000);
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

