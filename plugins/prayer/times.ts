// Prayer times by calculation (adhan). Fajr and Isha hang on a twilight angle
// that each authority publishes differently, so the convention is the
// caller's; sunrise, Dhuhr, Asr and Maghrib follow the sun under all of them.
import { CalculationMethod, CalculationParameters, Coordinates, HighLatitudeRule, PolarCircleResolution, PrayerTimes } from "adhan";
import { invalid } from "hearth";

interface Convention {
  label: string;
  /** Twilight angles as published by the authority; isha_minutes when Isha is a fixed time after Maghrib. */
  fajr_angle: number;
  isha_angle?: number;
  isha_minutes?: number;
  params: () => CalculationParameters;
}

export const conventions = {
  isna: { label: "Islamic Society of North America", fajr_angle: 15, isha_angle: 15, params: CalculationMethod.NorthAmerica },
  mwl: { label: "Muslim World League", fajr_angle: 18, isha_angle: 17, params: CalculationMethod.MuslimWorldLeague },
  egypt: { label: "Egyptian General Authority of Survey", fajr_angle: 19.5, isha_angle: 17.5, params: CalculationMethod.Egyptian },
  karachi: { label: "University of Islamic Sciences, Karachi", fajr_angle: 18, isha_angle: 18, params: CalculationMethod.Karachi },
  // Umm al-Qura's Fajr angle with Isha 90 minutes after Maghrib, as used across the Gulf states.
  gulf: { label: "Gulf region", fajr_angle: 19.5, isha_minutes: 90, params: () => new CalculationParameters("Other", 19.5, 0, 90) },
  diyanet: { label: "Diyanet İşleri Başkanlığı (Turkey)", fajr_angle: 18, isha_angle: 17, params: CalculationMethod.Turkey },
  muis: { label: "Majlis Ugama Islam Singapura", fajr_angle: 20, isha_angle: 18, params: CalculationMethod.Singapore },
  // JAKIM publishes the same angles as MUIS, and rounds up the same way.
  jakim: { label: "Jabatan Kemajuan Islam Malaysia", fajr_angle: 20, isha_angle: 18, params: CalculationMethod.Singapore },
} satisfies Record<string, Convention>;

export type ConventionName = keyof typeof conventions;
export const conventionNames = Object.keys(conventions) as ConventionName[];

const PRAYERS = ["fajr", "sunrise", "dhuhr", "asr", "maghrib", "isha"] as const;
type PrayerName = (typeof PRAYERS)[number];

/** Refuses a zone name the platform's time-zone database does not know. */
export function checkZone(tz: string): string {
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    throw invalid("tz", `tz must be an IANA time zone such as "Europe/London" or "Asia/Singapore" (got ${JSON.stringify(tz)})`);
  }
}

/** The calendar date at an instant in a zone, as [year, month (1-12), day]. */
function localDate(at: Date, tz: string): [number, number, number] {
  const parts = new Intl.DateTimeFormat("en-CA", { timeZone: tz, year: "numeric", month: "2-digit", day: "2-digit" }).formatToParts(at);
  const get = (t: string) => Number(parts.find((p) => p.type === t)!.value);
  return [get("year"), get("month"), get("day")];
}

function clock(at: Date, tz: string): string {
  return new Intl.DateTimeFormat("en-GB", { timeZone: tz, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(at);
}

function compute(lat: number, lon: number, ymd: [number, number, number], name: ConventionName, resolve = true) {
  const coordinates = new Coordinates(lat, lon);
  const params = conventions[name].params();
  params.highLatitudeRule = HighLatitudeRule.recommended(coordinates);
  // Inside the polar circles some days have no sunrise or no night; borrow the nearest day that has both.
  params.polarCircleResolution = resolve ? PolarCircleResolution.AqrabYaum : PolarCircleResolution.Unresolved;
  // adhan reads the calendar date from the Date's local fields, whatever zone the process runs in.
  return new PrayerTimes(coordinates, new Date(ymd[0], ymd[1] - 1, ymd[2]), params);
}

function valid(d: Date | null | undefined): d is Date {
  return !!d && !Number.isNaN(d.getTime());
}

export function prayerTimes(lat: number, lon: number, tz: string, name: ConventionName, now: Date) {
  const zone = checkZone(tz);
  const today = localDate(now, zone);
  const pt = compute(lat, lon, today, name);
  const times = {} as Record<PrayerName, string | null>;
  const at = {} as Record<PrayerName, string | null>;
  for (const p of PRAYERS) {
    const d = pt[p];
    times[p] = valid(d) ? clock(d, zone) : null;
    at[p] = valid(d) ? d.toISOString() : null;
  }

  // Sunrise ends Fajr's time but is not itself a prayer, so "next" skips it.
  let next: { prayer: PrayerName; time: string; at: string; in_minutes: number; tomorrow: boolean } | null = null;
  for (const p of PRAYERS) {
    const d = pt[p];
    if (p === "sunrise" || !valid(d) || d.getTime() <= now.getTime()) continue;
    next = { prayer: p, time: clock(d, zone), at: d.toISOString(), in_minutes: Math.ceil((d.getTime() - now.getTime()) / 60000), tomorrow: false };
    break;
  }
  if (!next) {
    const after = new Date(Date.UTC(today[0], today[1] - 1, today[2] + 1));
    const fajr = compute(lat, lon, [after.getUTCFullYear(), after.getUTCMonth() + 1, after.getUTCDate()], name).fajr;
    if (valid(fajr))
      next = { prayer: "fajr", time: clock(fajr, zone), at: fajr.toISOString(), in_minutes: Math.ceil((fajr.getTime() - now.getTime()) / 60000), tomorrow: true };
  }

  const c = conventions[name] as Convention;
  const own = compute(lat, lon, today, name, false);
  const polar = !valid(own.sunrise) || !valid(own.maghrib);
  const missing = PRAYERS.filter((p) => times[p] === null);
  const note = missing.length
    ? `the sun neither rises nor sets here today, so ${missing.join(", ")} cannot be calculated; follow the nearest place or day with a sunrise and a sunset`
    : polar
      ? "the sun neither rises nor sets here today; these times are borrowed from the nearest day that has a sunrise and a sunset"
      : undefined;
  return {
    date: `${today[0]}-${String(today[1]).padStart(2, "0")}-${String(today[2]).padStart(2, "0")}`,
    tz: zone,
    location: { lat, lon },
    method: {
      name,
      label: c.label,
      fajr_angle: c.fajr_angle,
      ...(c.isha_angle !== undefined ? { isha_angle: c.isha_angle } : {}),
      ...(c.isha_minutes !== undefined ? { isha_minutes_after_maghrib: c.isha_minutes } : {}),
    },
    times,
    at,
    next,
    ...(note ? { note } : {}),
    source: "calculated on this instance with adhan (astronomical formulas); local mosques may add a few minutes of precaution",
  };
}
