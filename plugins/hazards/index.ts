import "./providers.ts";
import { Type as T } from "@sinclair/typebox";
import { definePlugin, read } from "hearth";
import { floods } from "./floods.ts";
import { alerts, LEVELS, type Level } from "./gdacs.ts";
import { ago, distanceKm, Lat, Lon, nearFrom, WithinKm, type Near } from "./geo.ts";
import { feedFor, quakes, type Period } from "./usgs.ts";

const MINUTE = 60;
const round1 = (x: number) => Math.round(x * 10) / 10;

/** Keeps what lies within the radius, nearest distance attached. */
function around<T extends { lat: number; lon: number }>(items: T[], near: Near | null): (T & { distance_km?: number })[] {
  if (!near) return items;
  return items.map((i) => ({ ...i, distance_km: round1(distanceKm(near.lat, near.lon, i.lat, i.lon)) })).filter((i) => i.distance_km <= near.within_km);
}

/** Roughly how far a point is from England's bounding box (Scilly to Lowestoft, Lizard to Berwick); 0 inside it. */
function kmToEngland(lat: number, lon: number): number {
  const clampedLat = Math.min(55.82, Math.max(49.86, lat));
  const clampedLon = Math.min(1.77, Math.max(-6.45, lon));
  return distanceKm(lat, lon, clampedLat, clampedLon);
}

export default definePlugin({
  name: "hazards",
  description:
    "Natural hazards now: recent earthquakes (USGS), disasters with an alert level worldwide (GDACS), and flood warnings in England (Environment Agency).",
  needs: ["http"],
  providers: ["EA_FLOODS", "GDACS", "USGS"],
  config: {
    USGS_URL: { default: "", description: "Base URL of the USGS earthquake feeds (https://earthquake.usgs.gov when empty)." },
    GDACS_URL: { default: "", description: "Base URL of GDACS (https://www.gdacs.org when empty)." },
    EA_FLOODS_URL: { default: "", description: "Base URL of the Environment Agency's real-time data API (https://environment.data.gov.uk when empty)." },
  },
  methods: {
    quakes: read({
      description:
        "Recent earthquakes, newest first: magnitude, place, when and how long ago, depth, the USGS tsunami flag (a large oceanic quake; check the warning centres), and distance when a point is given. `min` magnitude default 2.5; `period` hour, day (default), week or month; `within_km` default 500 around lat/lon. Cached a minute.",
      args: T.Object({
        min: T.Number({ minimum: 0, maximum: 10, default: 2.5, description: "Smallest magnitude (default 2.5)." }),
        period: T.Union([T.Literal("hour"), T.Literal("day"), T.Literal("week"), T.Literal("month")], {
          default: "day",
          description: "How far back: hour, day, week or month (default day).",
        }),
        lat: Lat,
        lon: Lon,
        within_km: WithinKm(500),
      }),
      access: "public",
      openWorld: true,
      async run(a, ctx) {
        const near = nearFrom(a, 500);
        const min = a.min ?? 2.5;
        const period = (a.period ?? "day") as Period;
        const f = await ctx.http.get("USGS", feedFor(min, period), { ttl: MINUTE, revalidate: MINUTE, keep: 86_400, parse: quakes });
        const now = ctx.clock.now().getTime();
        const list = around(
          f.data.filter((q) => q.magnitude >= min),
          near,
        )
          .sort((x, y) => y.time - x.time)
          .map(({ time, ...q }) => ({
            ...q,
            time: new Date(time).toISOString(),
            ago: ago(time, now),
            minutes_ago: Math.max(0, Math.floor((now - time) / 60_000)),
          }));
        return { min, period, near, count: list.length, quakes: list, ...f.about };
      },
    }),
    alerts: read({
      description:
        "Current disasters worldwide with a GDACS alert level (cyclones, floods, volcanoes, wildfires, earthquakes, droughts), most severe first. `level` green (default: everything), orange (orange and red) or red; `within_km` default 1000 around lat/lon. Cached 10 minutes.",
      args: T.Object({
        level: T.Union([T.Literal("green"), T.Literal("orange"), T.Literal("red")], {
          default: "green",
          description: "Lowest alert level kept: green (all), orange or red.",
        }),
        lat: Lat,
        lon: Lon,
        within_km: WithinKm(1000),
      }),
      access: "public",
      openWorld: true,
      async run(a, ctx) {
        const near = nearFrom(a, 1000);
        const level = (a.level ?? "green") as Level;
        const floor = LEVELS.indexOf(level);
        const f = await ctx.http.get("GDACS", "/gdacsapi/api/events/geteventlist/EVENTS4APP", { ttl: 10 * MINUTE, keep: 86_400, parse: alerts });
        const list = around(
          f.data.filter((e) => LEVELS.indexOf(e.level) >= floor),
          near,
        ).sort((x, y) => LEVELS.indexOf(y.level) - LEVELS.indexOf(x.level) || (y.from ?? "").localeCompare(x.from ?? ""));
        return { level, near, count: list.length, alerts: list, ...f.about };
      },
    }),
    floods: read({
      description:
        "Flood warnings and alerts in force in England (Environment Agency), most severe first. England only: elsewhere the answer is empty and says so. A forecast of flooding, not a record. `severe` keeps only warnings and severe warnings; `within_km` default 30 around lat/lon. Cached 5 minutes.",
      args: T.Object({
        lat: Lat,
        lon: Lon,
        within_km: WithinKm(30),
        severe: T.Optional(T.Boolean({ description: "Only flood warnings and severe flood warnings, dropping be-prepared alerts." })),
      }),
      access: "public",
      openWorld: true,
      async run(a, ctx) {
        const near = nearFrom(a, 30);
        const coverage = "England only: the Environment Agency covers England; Wales, Scotland and Northern Ireland have their own services.";
        if (near && kmToEngland(near.lat, near.lon) > near.within_km)
          return {
            coverage,
            near,
            severe_only: a.severe === true,
            count: 0,
            floods: [],
            note: `this point is ${Math.round(kmToEngland(near.lat, near.lon))} km from England, beyond within_km: the Environment Agency issues no warnings there, so none was asked`,
          };
        // The API filters by area itself: its items carry no coordinates.
        const f = await ctx.http.get("EA_FLOODS", "/flood-monitoring/id/floods", {
          query: { "min-severity": a.severe ? 2 : 3, lat: near?.lat, long: near?.lon, dist: near?.within_km },
          ttl: 5 * MINUTE,
          keep: 86_400,
          parse: floods,
        });
        const list = f.data.filter((x) => x.level <= (a.severe ? 2 : 3)).sort((x, y) => x.level - y.level || (y.changed ?? "").localeCompare(x.changed ?? ""));
        return {
          coverage,
          near,
          severe_only: a.severe === true,
          count: list.length,
          floods: list,
          ...f.about,
        };
      },
    }),
  },
});
