// Reading Open-Meteo's answers. Each API returns arrays keyed by variable
// under `current`, `hourly` or `daily`, with units alongside; a refused
// request is HTTP 400 with {"error": true, "reason": "..."}.
import { invalid, upstream } from "hearth";
import { conditions } from "./codes.ts";

type Block = Record<string, unknown>;
export interface OpenMeteoBody {
  latitude: number;
  longitude: number;
  timezone?: string;
  elevation?: number;
  current?: Block;
  current_units?: Record<string, string>;
  daily?: Record<string, unknown[]>;
  daily_units?: Record<string, string>;
}

/** Checks the common envelope; a 400 from the provider means this instance asked wrongly. */
export function envelope(body: any, status: number): OpenMeteoBody {
  if (status === 400 || body?.error === true) throw upstream("upstream_failed", `Open-Meteo refused the request: ${String(body?.reason ?? "no reason given")}`);
  if (!body || typeof body !== "object" || typeof body.latitude !== "number" || typeof body.longitude !== "number") throw new Error("not an Open-Meteo answer");
  return body as OpenMeteoBody;
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const column = (daily: Record<string, unknown[]> | undefined, name: string, i: number) => num(daily?.[name]?.[i]);

export function location(b: OpenMeteoBody) {
  return { lat: b.latitude, lon: b.longitude, timezone: b.timezone ?? "GMT", elevation_m: num(b.elevation) };
}

export const FORECAST_CURRENT = [
  "temperature_2m",
  "apparent_temperature",
  "relative_humidity_2m",
  "precipitation",
  "weather_code",
  "cloud_cover",
  "wind_speed_10m",
  "wind_direction_10m",
  "wind_gusts_10m",
  "is_day",
];
export const FORECAST_DAILY = [
  "weather_code",
  "temperature_2m_max",
  "temperature_2m_min",
  "precipitation_sum",
  "precipitation_probability_max",
  "wind_speed_10m_max",
  "uv_index_max",
  "sunrise",
  "sunset",
];

export function forecast(body: any, status: number) {
  const b = envelope(body, status);
  const c = b.current;
  const d = b.daily;
  if (!c || !d || !Array.isArray(d.time)) throw new Error("forecast without current or daily blocks");
  return {
    location: location(b),
    units: { temperature: "°C", wind: "km/h", precipitation: "mm" },
    current: {
      time: String(c.time),
      conditions: conditions(c.weather_code),
      weather_code: num(c.weather_code),
      temperature_c: num(c.temperature_2m),
      feels_like_c: num(c.apparent_temperature),
      humidity_pct: num(c.relative_humidity_2m),
      precipitation_mm: num(c.precipitation),
      cloud_cover_pct: num(c.cloud_cover),
      wind_kmh: num(c.wind_speed_10m),
      wind_direction_deg: num(c.wind_direction_10m),
      gusts_kmh: num(c.wind_gusts_10m),
      daylight: c.is_day === 1 ? true : c.is_day === 0 ? false : null,
    },
    days: d.time.map((date, i) => ({
      date: String(date),
      conditions: conditions(d.weather_code?.[i]),
      high_c: column(d, "temperature_2m_max", i),
      low_c: column(d, "temperature_2m_min", i),
      precipitation_mm: column(d, "precipitation_sum", i),
      precipitation_chance_pct: column(d, "precipitation_probability_max", i),
      wind_max_kmh: column(d, "wind_speed_10m_max", i),
      uv_index_max: column(d, "uv_index_max", i),
      sunrise: typeof d.sunrise?.[i] === "string" ? d.sunrise[i] : null,
      sunset: typeof d.sunset?.[i] === "string" ? d.sunset[i] : null,
    })),
  };
}

const POLLEN = ["alder", "birch", "grass", "mugwort", "olive", "ragweed"];
export const AIR_CURRENT = ["european_aqi", "us_aqi", "pm2_5", "pm10", "ozone", "nitrogen_dioxide", "uv_index", ...POLLEN.map((p) => `${p}_pollen`)];

/** The European AQI's published bands. */
function europeanBand(aqi: number | null): string | null {
  if (aqi === null) return null;
  if (aqi <= 20) return "good";
  if (aqi <= 40) return "fair";
  if (aqi <= 60) return "moderate";
  if (aqi <= 80) return "poor";
  if (aqi <= 100) return "very poor";
  return "extremely poor";
}

/** The US EPA AQI's published bands. */
function usBand(aqi: number | null): string | null {
  if (aqi === null) return null;
  if (aqi <= 50) return "good";
  if (aqi <= 100) return "moderate";
  if (aqi <= 150) return "unhealthy for sensitive groups";
  if (aqi <= 200) return "unhealthy";
  if (aqi <= 300) return "very unhealthy";
  return "hazardous";
}

export function air(body: any, status: number) {
  const b = envelope(body, status);
  const c = b.current;
  if (!c) throw new Error("air quality without a current block");
  const eu = num(c.european_aqi);
  const us = num(c.us_aqi);
  const out: Record<string, unknown> = {
    location: location(b),
    time: String(c.time),
    european_aqi: eu,
    european_aqi_band: europeanBand(eu),
    us_aqi: us,
    us_aqi_band: usBand(us),
    units: { pm2_5: "μg/m³", pm10: "μg/m³", ozone: "μg/m³", nitrogen_dioxide: "μg/m³", pollen: "grains/m³" },
    pm2_5: num(c.pm2_5),
    pm10: num(c.pm10),
    ozone: num(c.ozone),
    nitrogen_dioxide: num(c.nitrogen_dioxide),
    uv_index: num(c.uv_index),
  };
  // Pollen is modelled for Europe in its season only; elsewhere the values are
  // null, and saying nothing is truer than saying zero.
  const pollen: Record<string, number> = {};
  for (const p of POLLEN) {
    const v = num(c[`${p}_pollen`]);
    if (v !== null) pollen[p] = v;
  }
  if (Object.keys(pollen).length) out.pollen = pollen;
  return out;
}

export const MARINE_CURRENT = ["wave_height", "wave_direction", "wave_period", "sea_surface_temperature", "swell_wave_height", "swell_wave_period"];
export const MARINE_DAILY = ["wave_height_max", "wave_direction_dominant", "wave_period_max", "swell_wave_height_max"];

export function marine(body: any, status: number) {
  const b = envelope(body, status);
  const c = b.current;
  const d = b.daily;
  if (!c || !d || !Array.isArray(d.time)) throw new Error("marine answer without current or daily blocks");
  const now = {
    time: String(c.time),
    wave_height_m: num(c.wave_height),
    wave_direction_deg: num(c.wave_direction),
    wave_period_s: num(c.wave_period),
    swell_height_m: num(c.swell_wave_height),
    swell_period_s: num(c.swell_wave_period),
    sea_temperature_c: num(c.sea_surface_temperature),
  };
  const days = d.time.map((date, i) => ({
    date: String(date),
    wave_height_max_m: column(d, "wave_height_max", i),
    wave_direction_deg: column(d, "wave_direction_dominant", i),
    wave_period_max_s: column(d, "wave_period_max", i),
    swell_height_max_m: column(d, "swell_wave_height_max", i),
  }));
  const out: Record<string, unknown> = { location: location(b), now, days };
  // Inland points come back with every value null rather than an error.
  if (now.wave_height_m === null && days.every((x) => x.wave_height_max_m === null))
    out.note = "no sea state is modelled at this point: it may be on land or too close to the shore";
  return out;
}

export const HISTORY_DAILY = ["temperature_2m_max", "temperature_2m_min", "precipitation_sum"];

const OUT_OF_RANGE = /Parameter '(start_date|end_date)' is out of allowed range from (\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2})/;

export function history(body: any, status: number) {
  if (status === 400) {
    const m = OUT_OF_RANGE.exec(String(body?.reason ?? ""));
    if (m) {
      const field = m[1] === "start_date" ? "start" : "end";
      throw invalid(field, `the weather archive holds days from ${m[2]} to ${m[3]}: the latest available day is ${m[3]}`);
    }
  }
  const b = envelope(body, status);
  const d = b.daily;
  if (!d || !Array.isArray(d.time)) throw new Error("archive answer without a daily block");
  let highSum = 0;
  let highN = 0;
  let lowSum = 0;
  let lowN = 0;
  let rain = 0;
  let rainN = 0;
  let hottest: { date: string; c: number } | null = null;
  let coldest: { date: string; c: number } | null = null;
  let wettest: { date: string; mm: number } | null = null;
  d.time.forEach((t, i) => {
    const date = String(t);
    const hi = column(d, "temperature_2m_max", i);
    const lo = column(d, "temperature_2m_min", i);
    const p = column(d, "precipitation_sum", i);
    if (hi !== null) {
      highSum += hi;
      highN++;
      if (!hottest || hi > hottest.c) hottest = { date, c: hi };
    }
    if (lo !== null) {
      lowSum += lo;
      lowN++;
      if (!coldest || lo < coldest.c) coldest = { date, c: lo };
    }
    if (p !== null) {
      rain += p;
      rainN++;
      if (!wettest || p > wettest.mm) wettest = { date, mm: p };
    }
  });
  const round = (x: number) => Math.round(x * 10) / 10;
  return {
    location: location(b),
    start: String(d.time[0] ?? ""),
    end: String(d.time[d.time.length - 1] ?? ""),
    days: d.time.length,
    days_with_data: Math.max(highN, lowN, rainN),
    average_high_c: highN ? round(highSum / highN) : null,
    average_low_c: lowN ? round(lowSum / lowN) : null,
    total_rainfall_mm: rainN ? round(rain) : null,
    extremes: { hottest_day: hottest, coldest_day: coldest, wettest_day: wettest },
  };
}
