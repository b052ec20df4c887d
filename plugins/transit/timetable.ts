// Answers from imported GTFS timetables: stops by id, name or position, and
// what the timetable says is due at a stop in the next hours.
import { and, asc, between, desc, eq, gte, inArray, lte, or, sql } from "drizzle-orm";
import type { Db } from "hearth";
import { dayBefore, instantOf, isoDate, localNow } from "./gtfs-time.ts";
import type { FeedRow } from "./carried.ts";
import { transitCalendar, transitDates, transitRoutes, transitStops, transitTimes, transitTrips } from "./schema.ts";

export type GtfsStop = typeof transitStops.$inferSelect;

const WINDOW_S = 2 * 3600;
const MAX_DUE = 30;

export function stopById(db: Db, feeds: string[], id: string): Promise<GtfsStop[]> {
  if (!feeds.length) return Promise.resolve([]);
  return db
    .select()
    .from(transitStops)
    .where(and(inArray(transitStops.feed, feeds), or(eq(transitStops.id, id), eq(transitStops.code, id))))
    .all();
}

/**
 * Stops whose name is the query (exact: true) or contains it, stations first; either way in any case
 * (of ASCII letters, as SQLite's NOCASE and LIKE have it), compared lower-cased so PostgreSQL, whose
 * = and LIKE heed case, answers the same.
 */
export function stopsByName(db: Db, feeds: string[], name: string, exact: boolean): Promise<GtfsStop[]> {
  if (!feeds.length) return Promise.resolve([]);
  const matches = exact
    ? sql`lower(${transitStops.name}) = lower(${name})`
    : sql`lower(${transitStops.name}) LIKE lower(${`%${name.replace(/[%_\\]/g, (c) => `\\${c}`)}%`}) ESCAPE '\\'`;
  return db
    .select()
    .from(transitStops)
    .where(and(inArray(transitStops.feed, feeds), matches))
    .orderBy(desc(transitStops.kind), sql`length(${transitStops.name})`)
    .limit(20)
    .all();
}

/** A stop and, for a station, the platforms inside it: stop times name the platforms. */
export async function withChildren(db: Db, stop: GtfsStop): Promise<GtfsStop[]> {
  if (stop.kind !== 1) return [stop];
  return [stop, ...(await db.select().from(transitStops).where(and(eq(transitStops.feed, stop.feed), eq(transitStops.parent, stop.id))).all())];
}

export async function stopsNear(db: Db, feeds: string[], lat: number, lon: number, radiusM: number): Promise<(GtfsStop & { distance_m: number })[]> {
  if (!feeds.length) return [];
  const dLat = radiusM / 111_320;
  const dLon = radiusM / (111_320 * Math.max(0.01, Math.cos((lat * Math.PI) / 180)));
  const rows = await db
    .select()
    .from(transitStops)
    .where(
      and(
        inArray(transitStops.feed, feeds),
        between(transitStops.lat, lat - dLat, lat + dLat),
        between(transitStops.lon, lon - dLon, lon + dLon),
        inArray(transitStops.kind, [0, 1]),
      ),
    )
    .all();
  return rows
    .map((s) => ({ ...s, distance_m: Math.round(metres(lat, lon, s.lat!, s.lon!)) }))
    .filter((s) => s.distance_m <= radiusM)
    .sort((a, b) => a.distance_m - b.distance_m);
}

export function metres(aLat: number, aLon: number, bLat: number, bLon: number): number {
  const r = (d: number) => (d * Math.PI) / 180;
  const h = Math.sin(r(bLat - aLat) / 2) ** 2 + Math.cos(r(aLat)) * Math.cos(r(bLat)) * Math.sin(r(bLon - aLon) / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Services running on a day: the calendar's weekdays within its dates, with the exceptions applied. */
async function servicesOn(db: Db, feed: string, date: string, weekday: number): Promise<Set<string>> {
  const calendar = await db
    .select({ service: transitCalendar.service, days: transitCalendar.days })
    .from(transitCalendar)
    .where(and(eq(transitCalendar.feed, feed), lte(transitCalendar.start, date), gte(transitCalendar.end, date)))
    .all();
  const on = new Set(calendar.filter((c) => c.days[weekday] === "1").map((c) => c.service));
  const exceptions = await db
    .select({ service: transitDates.service, type: transitDates.type })
    .from(transitDates)
    .where(and(eq(transitDates.feed, feed), eq(transitDates.date, date)))
    .all();
  for (const d of exceptions) {
    if (d.type === 1) on.add(d.service);
    else on.delete(d.service);
  }
  return on;
}

export interface Due {
  line: string | null;
  line_name: string | null;
  destination: string | null;
  stop_id: string;
  scheduled: string;
  minutes: number;
}

/** What the timetable has leaving the stops in the next two hours, soonest first. */
export async function dueAt(db: Db, feed: FeedRow, stopIds: string[], at: Date): Promise<Due[]> {
  const tz = feed.timezone || "UTC";
  const today = localNow(at, tz);
  const yesterday = dayBefore(today.date, today.weekday);
  const out: (Due & { t: number })[] = [];
  // Yesterday's service day runs past midnight with times over 24:00.
  for (const day of [
    { date: today.date, weekday: today.weekday, from: today.seconds },
    { date: yesterday.date, weekday: yesterday.weekday, from: today.seconds + 86400 },
  ]) {
    const services = await servicesOn(db, feed.id, day.date, day.weekday);
    if (!services.size) continue;
    const rows = await db
      .select({
        stop: transitTimes.stop,
        departure: transitTimes.departure,
        stop_headsign: transitTimes.headsign,
        service: transitTrips.service,
        headsign: transitTrips.headsign,
        short_name: transitRoutes.shortName,
        long_name: transitRoutes.longName,
      })
      .from(transitTimes)
      .innerJoin(transitTrips, and(eq(transitTrips.feed, transitTimes.feed), eq(transitTrips.id, transitTimes.trip)))
      .leftJoin(transitRoutes, and(eq(transitRoutes.feed, transitTrips.feed), eq(transitRoutes.id, transitTrips.route)))
      .where(and(eq(transitTimes.feed, feed.id), inArray(transitTimes.stop, stopIds), between(transitTimes.departure, day.from, day.from + WINDOW_S)))
      .orderBy(asc(transitTimes.departure))
      .limit(500)
      .all();
    for (const r of rows) {
      if (!services.has(r.service)) continue;
      const when = instantOf(day.date, r.departure!, tz);
      out.push({
        line: r.short_name ?? r.long_name,
        line_name: r.long_name,
        destination: r.stop_headsign ?? r.headsign,
        stop_id: r.stop,
        scheduled: when.toISOString(),
        minutes: Math.max(0, Math.round((when.getTime() - at.getTime()) / 60000)),
        t: when.getTime(),
      });
    }
  }
  return out
    .sort((a, b) => a.t - b.t)
    .slice(0, MAX_DUE)
    .map(({ t, ...d }) => d);
}

export const validity = (f: FeedRow, today: string) => ({
  valid_from: f.startDate ? isoDate(f.startDate) : null,
  valid_to: f.endDate ? isoDate(f.endDate) : null,
  expired: !!f.endDate && f.endDate < today,
});
