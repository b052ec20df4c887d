// Answers from imported GTFS timetables: stops by id, name or position, and
// what the timetable says is due at a stop in the next hours.
import type { Database } from "bun:sqlite";
import { dayBefore, instantOf, isoDate, localNow } from "./gtfs-time.ts";
import type { FeedRow } from "./carried.ts";

export interface GtfsStop {
  feed: string;
  id: string;
  code: string | null;
  name: string;
  lat: number | null;
  lon: number | null;
  parent: string | null;
  kind: number;
}

const WINDOW_S = 2 * 3600;
const MAX_DUE = 30;

export function stopById(db: Database, feeds: string[], id: string): GtfsStop[] {
  if (!feeds.length) return [];
  const marks = feeds.map(() => "?").join(",");
  return db.query(`SELECT * FROM transit_stops WHERE feed IN (${marks}) AND (id = ? OR code = ?)`).all(...feeds, id, id) as GtfsStop[];
}

/** Stops whose name is the query (exact: true) or contains it, stations first. */
export function stopsByName(db: Database, feeds: string[], name: string, exact: boolean): GtfsStop[] {
  if (!feeds.length) return [];
  const marks = feeds.map(() => "?").join(",");
  const q = exact ? name : `%${name.replace(/[%_\\]/g, (c) => `\\${c}`)}%`;
  return db
    .query(`SELECT * FROM transit_stops WHERE feed IN (${marks}) AND name ${exact ? "= ? COLLATE NOCASE" : "LIKE ? ESCAPE '\\'"} ORDER BY kind DESC, length(name) LIMIT 20`)
    .all(...feeds, q) as GtfsStop[];
}

/** A stop and, for a station, the platforms inside it: stop times name the platforms. */
export function withChildren(db: Database, stop: GtfsStop): GtfsStop[] {
  if (stop.kind !== 1) return [stop];
  return [stop, ...(db.query("SELECT * FROM transit_stops WHERE feed = ? AND parent = ?").all(stop.feed, stop.id) as GtfsStop[])];
}

export function stopsNear(db: Database, feeds: string[], lat: number, lon: number, radiusM: number): (GtfsStop & { distance_m: number })[] {
  if (!feeds.length) return [];
  const dLat = radiusM / 111_320;
  const dLon = radiusM / (111_320 * Math.max(0.01, Math.cos((lat * Math.PI) / 180)));
  const marks = feeds.map(() => "?").join(",");
  const rows = db
    .query(`SELECT * FROM transit_stops WHERE feed IN (${marks}) AND lat BETWEEN ? AND ? AND lon BETWEEN ? AND ? AND kind IN (0, 1)`)
    .all(...feeds, lat - dLat, lat + dLat, lon - dLon, lon + dLon) as GtfsStop[];
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
function servicesOn(db: Database, feed: string, date: string, weekday: number): Set<string> {
  const on = new Set(
    (db.query("SELECT service, days FROM transit_calendar WHERE feed = ? AND start <= ? AND end >= ?").all(feed, date, date) as { service: string; days: string }[])
      .filter((c) => c.days[weekday] === "1")
      .map((c) => c.service),
  );
  for (const d of db.query("SELECT service, type FROM transit_dates WHERE feed = ? AND date = ?").all(feed, date) as { service: string; type: number }[]) {
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
export function dueAt(db: Database, feed: FeedRow, stopIds: string[], at: Date): Due[] {
  const tz = feed.timezone || "UTC";
  const today = localNow(at, tz);
  const yesterday = dayBefore(today.date, today.weekday);
  const marks = stopIds.map(() => "?").join(",");
  const out: (Due & { t: number })[] = [];
  // Yesterday's service day runs past midnight with times over 24:00.
  for (const day of [
    { date: today.date, weekday: today.weekday, from: today.seconds },
    { date: yesterday.date, weekday: yesterday.weekday, from: today.seconds + 86400 },
  ]) {
    const services = servicesOn(db, feed.id, day.date, day.weekday);
    if (!services.size) continue;
    const rows = db
      .query(
        `SELECT t.stop, t.departure, t.headsign AS stop_headsign, tr.service, tr.headsign, r.short_name, r.long_name
         FROM transit_times t JOIN transit_trips tr ON tr.feed = t.feed AND tr.id = t.trip
         LEFT JOIN transit_routes r ON r.feed = tr.feed AND r.id = tr.route
         WHERE t.feed = ? AND t.stop IN (${marks}) AND t.departure BETWEEN ? AND ?
         ORDER BY t.departure LIMIT 500`,
      )
      .all(feed.id, ...stopIds, day.from, day.from + WINDOW_S) as {
      stop: string;
      departure: number;
      stop_headsign: string | null;
      service: string;
      headsign: string | null;
      short_name: string | null;
      long_name: string | null;
    }[];
    for (const r of rows) {
      if (!services.has(r.service)) continue;
      const when = instantOf(day.date, r.departure, tz);
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
