// Imports a published GTFS archive into the database: stops, routes, trips,
// stop times and service calendars. The archive is fetched with a
// conditional request (unchanged: nothing is redone), unpacked in memory and
// written in batches, so other writes interleave with a large import.
import { eq } from "drizzle-orm";
import { upstream } from "../../core/errors.ts";
import type { Ctx, Db } from "../../core/plugin.ts";
import { defineProvider } from "../../core/upstream/index.ts";
import { csvRecords } from "./csv.ts";
import type { ConfiguredFeed } from "./feeds-config.ts";
import { secondsOf } from "./gtfs-time.ts";
import { transitFeeds } from "./schema.ts";

// Feeds live on many hosts: the provider has no base URL and each path is a whole URL.
defineProvider({ name: "GTFS", label: "published GTFS timetable", url: "", concurrency: 2, timeoutMs: 120_000, maxBytes: 300_000_000 });

const BATCH = 5000;
const TABLES = ["transit_stops", "transit_routes", "transit_trips", "transit_times", "transit_calendar", "transit_dates"];

type Raw = { run(sql: string, ...params: unknown[]): unknown; prepare(sql: string): { run(...params: unknown[]): unknown } };
const raw = (db: Db) => (db as unknown as { $client: Raw }).$client;

function files(zip: Uint8Array): Map<string, string> {
  const wanted = new Set(["agency.txt", "stops.txt", "routes.txt", "trips.txt", "stop_times.txt", "calendar.txt", "calendar_dates.txt", "feed_info.txt"]);
  let entries: Record<string, Uint8Array>;
  try {
    // Some publishers put the files in a folder inside the archive.
    const { unzipSync } = require("fflate") as typeof import("fflate");
    entries = unzipSync(zip, { filter: (f) => wanted.has(f.name.split("/").pop()!) });
  } catch {
    throw upstream("upstream_failed", "the timetable archive is not a readable zip file");
  }
  const out = new Map<string, string>();
  const dec = new TextDecoder();
  for (const [name, bytes] of Object.entries(entries)) out.set(name.split("/").pop()!, dec.decode(bytes));
  if (!out.has("stops.txt") || !out.has("stop_times.txt") || !out.has("trips.txt")) throw upstream("upstream_failed", "the archive is not a GTFS timetable (stops.txt, trips.txt or stop_times.txt missing)");
  return out;
}

async function batches(ctx: Ctx, sql: string, rows: Iterable<unknown[]>) {
  let pending: unknown[][] = [];
  const flush = async () => {
    const chunk = pending;
    pending = [];
    await ctx.writes((db) => {
      const st = raw(db).prepare(sql);
      for (const r of chunk) st.run(...r);
    });
  };
  for (const r of rows) {
    pending.push(r);
    if (pending.length >= BATCH) await flush();
  }
  if (pending.length) await flush();
}

function* map<T>(it: Iterable<Record<string, string>>, fn: (r: Record<string, string>) => T | null): Generator<T> {
  for (const r of it) {
    const v = fn(r);
    if (v !== null) yield v;
  }
}

const orNull = (s: string | undefined) => (s === undefined || s === "" ? null : s);
const numOrNull = (s: string | undefined) => (s === undefined || s === "" || !Number.isFinite(Number(s)) ? null : Number(s));

/** Fetches a feed and, when it changed, replaces its rows. Returns the feed's row afterwards. */
export async function importFeed(ctx: Ctx, feed: ConfiguredFeed): Promise<void> {
  const now = () => ctx.clock.now().getTime();
  const held = ctx.db.select().from(transitFeeds).where(eq(transitFeeds.id, feed.id)).get();
  const sameUrl = held && held.url === feed.url && held.state === "ready";
  const headers: Record<string, string> = {};
  if (sameUrl && held.etag) headers["if-none-match"] = held.etag;
  if (sameUrl && held.lastModified) headers["if-modified-since"] = held.lastModified;
  const base = { id: feed.id, url: feed.url, state: held?.state ?? "importing" };
  let replacing = false;
  try {
    const r = await ctx.bytes.get("GTFS", feed.url, { headers, accept: [304] });
    if (r.status === 304 && sameUrl) {
      await ctx.writes((db) => db.update(transitFeeds).set({ checked: now() }).where(eq(transitFeeds.id, feed.id)).run());
      return;
    }
    const hash = new Bun.CryptoHasher("sha256").update(r.bytes).digest("hex");
    if (sameUrl && held.hash === hash) {
      await ctx.writes((db) => db.update(transitFeeds).set({ checked: now(), etag: r.etag, lastModified: r.lastModified }).where(eq(transitFeeds.id, feed.id)).run());
      return;
    }
    const text = files(r.bytes);
    replacing = true;
    await ctx.writes((db) => {
      for (const t of TABLES) raw(db).run(`DELETE FROM ${t} WHERE feed = ?`, feed.id);
      db.insert(transitFeeds)
        .values({ ...base, state: "importing", checked: now() })
        .onConflictDoUpdate({ target: transitFeeds.id, set: { url: feed.url, state: "importing", error: null, checked: now() } })
        .run();
    });
    const id = feed.id;
    let stops = 0;
    await batches(
      ctx,
      "INSERT OR REPLACE INTO transit_stops (feed, id, code, name, lat, lon, parent, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      map(csvRecords(text.get("stops.txt")!), (s) => {
        if (!s.stop_id) return null;
        stops++;
        return [id, s.stop_id, orNull(s.stop_code), s.stop_name || s.stop_id, numOrNull(s.stop_lat), numOrNull(s.stop_lon), orNull(s.parent_station), Number(s.location_type || 0)];
      }),
    );
    await batches(
      ctx,
      "INSERT OR REPLACE INTO transit_routes (feed, id, short_name, long_name, type) VALUES (?, ?, ?, ?, ?)",
      map(csvRecords(text.get("routes.txt") ?? ""), (r) => (r.route_id ? [id, r.route_id, orNull(r.route_short_name), orNull(r.route_long_name), numOrNull(r.route_type)] : null)),
    );
    let trips = 0;
    await batches(
      ctx,
      "INSERT OR REPLACE INTO transit_trips (feed, id, route, service, headsign) VALUES (?, ?, ?, ?, ?)",
      map(csvRecords(text.get("trips.txt")!), (t) => {
        if (!t.trip_id) return null;
        trips++;
        return [id, t.trip_id, t.route_id, t.service_id, orNull(t.trip_headsign)];
      }),
    );
    await batches(
      ctx,
      "INSERT INTO transit_times (feed, trip, stop, seq, arrival, departure, headsign) VALUES (?, ?, ?, ?, ?, ?, ?)",
      map(csvRecords(text.get("stop_times.txt")!), (t) => {
        if (!t.trip_id || !t.stop_id) return null;
        const arr = secondsOf(t.arrival_time);
        const dep = secondsOf(t.departure_time) ?? arr;
        return [id, t.trip_id, t.stop_id, Number(t.stop_sequence || 0), arr ?? dep, dep, orNull(t.stop_headsign)];
      }),
    );
    let start: string | null = null;
    let end: string | null = null;
    const widen = (d: string | undefined) => {
      if (!d || !/^\d{8}$/.test(d)) return;
      if (!start || d < start) start = d;
      if (!end || d > end) end = d;
    };
    await batches(
      ctx,
      "INSERT OR REPLACE INTO transit_calendar (feed, service, days, start, end) VALUES (?, ?, ?, ?, ?)",
      map(csvRecords(text.get("calendar.txt") ?? ""), (c) => {
        if (!c.service_id) return null;
        widen(c.start_date);
        widen(c.end_date);
        const days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"].map((d) => (c[d] === "1" ? "1" : "0")).join("");
        return [id, c.service_id, days, c.start_date, c.end_date];
      }),
    );
    await batches(
      ctx,
      "INSERT INTO transit_dates (feed, service, date, type) VALUES (?, ?, ?, ?)",
      map(csvRecords(text.get("calendar_dates.txt") ?? ""), (d) => {
        if (!d.service_id || !d.date) return null;
        if (d.exception_type === "1") widen(d.date);
        return [id, d.service_id, d.date, Number(d.exception_type)];
      }),
    );
    // feed_info's dates, when given, are the publisher's own statement of the feed's validity.
    const info = [...csvRecords(text.get("feed_info.txt") ?? "")][0];
    if (info?.feed_start_date) start = info.feed_start_date;
    if (info?.feed_end_date) end = info.feed_end_date;
    const agencies = [...csvRecords(text.get("agency.txt") ?? "")];
    const name = agencies.map((a) => a.agency_name).filter(Boolean).join(", ") || info?.feed_publisher_name || null;
    await ctx.writes((db) =>
      db
        .update(transitFeeds)
        .set({
          name,
          timezone: agencies[0]?.agency_timezone || "UTC",
          size: r.bytes.length,
          hash,
          etag: r.etag,
          lastModified: r.lastModified,
          state: "ready",
          error: null,
          checked: now(),
          imported: now(),
          startDate: start,
          endDate: end,
          stops,
          trips,
        })
        .where(eq(transitFeeds.id, feed.id))
        .run(),
    );
    ctx.log.info("timetable imported", { feed: feed.id, stops, trips });
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    ctx.log.warn("timetable import failed", { feed: feed.id, error: message });
    // The old rows still answer unless this attempt had begun replacing them.
    const state = held?.state === "ready" && !replacing ? "ready" : "failed";
    await ctx.writes((db) =>
      db
        .insert(transitFeeds)
        .values({ ...base, state, error: message, checked: now() })
        .onConflictDoUpdate({ target: transitFeeds.id, set: { error: message, checked: now(), state } })
        .run(),
    );
  }
}
