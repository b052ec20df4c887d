import "./providers.ts";
import { Type as T } from "@sinclair/typebox";
import { invalid, definePlugin, read, type Ctx, freeWhenHeld, type GetOptions } from "hearth";
import * as om from "./openmeteo.ts";
import { weatherCard } from "./card.ts";

const Lat = T.Number({ minimum: -90, maximum: 90, description: "Latitude in degrees (-90 to 90)." });
const Lon = T.Number({ minimum: -180, maximum: 180, description: "Longitude in degrees (-180 to 180)." });
const Day = T.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}$", description: "A day as YYYY-MM-DD." });

// Points are rounded to about a kilometre, finer than the models' grids, so
// neighbours share one cached answer.
const at = (lat: number, lon: number) => ({ latitude: Math.round(lat * 100) / 100, longitude: Math.round(lon * 100) / 100 });

const MINUTE = 60;
const forecastRequest = (lat: number, lon: number) => ({
  query: { ...at(lat, lon), current: om.FORECAST_CURRENT, daily: om.FORECAST_DAILY, timezone: "auto", forecast_days: 7 },
});

function checkDay(field: "start" | "end", value: string): number {
  const t = Date.parse(`${value}T00:00:00Z`);
  if (!Number.isFinite(t) || new Date(t).toISOString().slice(0, 10) !== value) throw invalid(field, `${field} is not a real day (got "${value}")`);
  if (value < "1940-01-01") throw invalid(field, `the weather archive starts on 1940-01-01 (got ${value})`);
  return t;
}

const withSource = <D extends object>(f: { data: D; about: object }) => ({ ...f.data, ...f.about });

export default definePlugin({
  name: "weather",
  card: weatherCard,
  description: "Weather from Open-Meteo: the forecast, air quality, the sea state and past weather for any point.",
  needs: ["http"],
  providers: ["OPEN_METEO", "OPEN_METEO_AIR", "OPEN_METEO_ARCHIVE", "OPEN_METEO_MARINE"],
  config: {
    OPEN_METEO_URL: { default: "", description: "Base URL of the Open-Meteo forecast API (https://api.open-meteo.com when empty)." },
    OPEN_METEO_AIR_URL: { default: "", description: "Base URL of the Open-Meteo air-quality API (https://air-quality-api.open-meteo.com when empty)." },
    OPEN_METEO_MARINE_URL: { default: "", description: "Base URL of the Open-Meteo marine API (https://marine-api.open-meteo.com when empty)." },
    OPEN_METEO_ARCHIVE_URL: { default: "", description: "Base URL of the Open-Meteo historical archive API (https://archive-api.open-meteo.com when empty)." },
  },
  methods: {
    forecast: read({
      description:
        "Current conditions and the next 7 days at a point: temperature (°C), feels-like, humidity, wind (km/h) and gusts, rain (mm) and its chance, UV, sunrise and sunset, in the point's local time. Cached 30 minutes; a cached answer is free.",
      args: T.Object({ lat: Lat, lon: Lon }),
      access: "public",
      openWorld: true,
      price: (a, ctx) => freeWhenHeld((ctx as Ctx).http.peek("OPEN_METEO", "/v1/forecast", forecastRequest(a.lat, a.lon)), 1),
      async run({ lat, lon }, ctx) {
        return withSource(
          await ctx.http.get("OPEN_METEO", "/v1/forecast", { ...forecastRequest(lat, lon), ttl: 30 * MINUTE, accept: [400], parse: om.forecast }),
        );
      },
    }),
    air: read({
      description:
        "Current air quality at a point: European and US AQI with their bands, PM2.5, PM10, ozone and nitrogen dioxide (μg/m³), UV index, and pollen (grains/m³) where it is modelled (Europe, in season) and only then. Cached 30 minutes.",
      args: T.Object({ lat: Lat, lon: Lon }),
      access: "public",
      openWorld: true,
      async run({ lat, lon }, ctx) {
        const opts: GetOptions<ReturnType<typeof om.air>> = {
          query: { ...at(lat, lon), current: om.AIR_CURRENT, timezone: "auto" },
          ttl: 30 * MINUTE,
          accept: [400],
          parse: om.air,
        };
        return withSource(await ctx.http.get("OPEN_METEO_AIR", "/v1/air-quality", opts));
      },
    }),
    marine: read({
      description:
        "Sea state at a point: wave height (m), period (s) and direction now and for each day ahead, swell, and sea surface temperature (°C). `days` 1 to 7, default 3. Cached an hour.",
      args: T.Object({ lat: Lat, lon: Lon, days: T.Integer({ minimum: 1, maximum: 7, default: 3, description: "Days ahead, 1 to 7 (default 3)." }) }),
      access: "public",
      openWorld: true,
      async run({ lat, lon, days }, ctx) {
        const f = await ctx.http.get("OPEN_METEO_MARINE", "/v1/marine", {
          query: { ...at(lat, lon), current: om.MARINE_CURRENT, daily: om.MARINE_DAILY, timezone: "auto", forecast_days: days ?? 3 },
          ttl: 60 * MINUTE,
          accept: [400],
          parse: om.marine,
        });
        return withSource(f);
      },
    }),
    history: read({
      description:
        "Actual weather between two days at a point, from the reanalysis archive (1940 onwards, a few days behind today): average daily high and low (°C), total rainfall (mm), and the hottest, coldest and wettest day. A range past the archive's end is refused with its latest available day.",
      args: T.Object({ lat: Lat, lon: Lon, start: Day, end: Day }),
      access: "public",
      openWorld: true,
      async run({ lat, lon, start, end }, ctx) {
        const s = checkDay("start", start);
        const e = checkDay("end", end);
        if (e < s) throw invalid("end", `end (${end}) is before start (${start})`);
        const today = Date.parse(ctx.clock.now().toISOString().slice(0, 10) + "T00:00:00Z");
        // A past day's record is settled once the preliminary data is replaced (about a week on).
        const settled = e < today - 10 * 86_400_000;
        const f = await ctx.http.get("OPEN_METEO_ARCHIVE", "/v1/archive", {
          query: { ...at(lat, lon), start_date: start, end_date: end, daily: om.HISTORY_DAILY, timezone: "auto" },
          ttl: settled ? Infinity : 6 * 60 * MINUTE,
          accept: [400],
          parse: om.history,
        });
        return withSource(f);
      },
    }),
  },
});
