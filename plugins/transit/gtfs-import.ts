// Imports a published GTFS archive into the database: stops, routes, trips,
// stop times and service calendars. The archive is fetched with a
// conditional request (unchanged: nothing is redone), unpacked in memory and
// written in batches, so other writes interleave with a large import.
import { eq, getTableColumns, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { upstream, type Ctx, type Db, defineProvider } from "hearth";
import { csvRecords } from "./csv.ts";
import type { ConfiguredFeed } from "./feeds-config.ts";
import { secondsOf } from "./gtfs-time.ts";
import { transitCalendar, transitDates, transitFeeds, transitRoutes, transitStops, transitTimes, transitTrips } from "./schema.ts";

// Feeds live on many hosts: the provider has no base URL and each path is a whole URL.
defineProvider({ name: "GTFS", label: "published GTFS timetable", url: "", concurrency: 2, timeoutMs: 120_000, maxBytes: 300_000_000 });

const BATCH = 5000;
/**
 * How long an import holds its feed without a sign of life. Instances sharing
 * one database import a feed once: the first claims it, the others leave it
 * be while its claim is fresh. Each batch renews the claim, so only an import
 * whose instance died or stopped lets it lapse, and then the feed is imported again.
 */
const CLAIM_MS = 2 * 60_000;
// Rows per INSERT: their parameters stay well under what SQLite (32,766) and PostgreSQL (65,535) bind in one statement.
const PER_STATEMENT = 500;
const TABLES = [transitStops, transitRoutes, transitTrips, transitTimes, transitCalendar, transitDates];

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

/**
 * Inserts rows in batches, each its own write. With `key`, a row whose key is already there replaces it,
 * the last of several in one file winning (as GTFS readers take a repeated id): within a batch
 * the duplicates are dropped first, since PostgreSQL refuses to update one row twice in one statement.
 */
async function batches<T extends SQLiteTable>(ctx: Ctx, beat: (db: Db) => Promise<unknown>, table: T, key: SQLiteColumn[] | null, rows: Iterable<T["$inferInsert"]>) {
  const columns = getTableColumns(table) as Record<string, SQLiteColumn>;
  const keyFields = Object.keys(columns).filter((k) => key?.includes(columns[k]));
  const keyOf = (r: Record<string, unknown>) => keyFields.map((k) => String(r[k])).join("\u0000");
  // Every other column takes the incoming row's value (SQLite and PostgreSQL both name it excluded.<column>).
  const replaced = Object.fromEntries(Object.entries(columns).filter(([k]) => !keyFields.includes(k)).map(([k, c]) => [k, sql.raw(`excluded."${c.name}"`)]));
  let pending: T["$inferInsert"][] = [];
  const flush = async () => {
    const chunk = key ? [...new Map(pending.map((r) => [keyOf(r as Record<string, unknown>), r])).values()] : pending;
    pending = [];
    await ctx.writes(async (db) => {
      await beat(db);
      for (let i = 0; i < chunk.length; i += PER_STATEMENT) {
        const q = db.insert(table).values(chunk.slice(i, i + PER_STATEMENT));
        await (key ? q.onConflictDoUpdate({ target: key, set: replaced as never }) : q).run();
      }
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
  const held = await ctx.db.select().from(transitFeeds).where(eq(transitFeeds.id, feed.id)).get();
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
    const claimed = await ctx.writes(async (db) => {
      await ctx.lock(`import:${feed.id}`);
      const at = now();
      const cur = await db
        .select({ state: transitFeeds.state, checked: transitFeeds.checked, url: transitFeeds.url, hash: transitFeeds.hash })
        .from(transitFeeds)
        .where(eq(transitFeeds.id, feed.id))
        .get();
      // Another instance sharing the database is importing this feed now: the rows it writes will answer.
      if (cur?.state === "importing" && cur.checked !== null && at - cur.checked < CLAIM_MS) return false;
      // Another finished importing these same bytes since this one looked: its rows answer already, and are not wiped to be written again.
      if (cur?.state === "ready" && cur.url === feed.url && cur.hash === hash) return false;
      for (const t of TABLES) await db.delete(t).where(eq(t.feed, feed.id)).run();
      await db
        .insert(transitFeeds)
        .values({ ...base, state: "importing", checked: at })
        .onConflictDoUpdate({ target: transitFeeds.id, set: { url: feed.url, state: "importing", error: null, checked: at } })
        .run();
      return true;
    });
    if (!claimed) {
      // Callers here wait as they would for an import of this instance's own: until it ends, or its claim lapses.
      ctx.log.info("timetable import left to the instance already importing it", { feed: feed.id });
      const until = Date.now() + CLAIM_MS;
      while (Date.now() < until) {
        await Bun.sleep(200);
        const cur = await ctx.db.select({ state: transitFeeds.state, checked: transitFeeds.checked }).from(transitFeeds).where(eq(transitFeeds.id, feed.id)).get();
        if (cur?.state !== "importing" || cur.checked === null || now() - cur.checked >= CLAIM_MS) break;
      }
      return;
    }
    replacing = true;
    const beat = (db: Db) => db.update(transitFeeds).set({ checked: now() }).where(eq(transitFeeds.id, feed.id)).run();
    const id = feed.id;
    let stops = 0;
    await batches(
      ctx,
      beat,
      transitStops,
      [transitStops.feed, transitStops.id],
      map(csvRecords(text.get("stops.txt")!), (s) => {
        if (!s.stop_id) return null;
        stops++;
        return {
          feed: id,
          id: s.stop_id,
          code: orNull(s.stop_code),
          name: s.stop_name || s.stop_id,
          lat: numOrNull(s.stop_lat),
          lon: numOrNull(s.stop_lon),
          parent: orNull(s.parent_station),
          kind: Number(s.location_type || 0),
        };
      }),
    );
    await batches(
      ctx,
      beat,
      transitRoutes,
      [transitRoutes.feed, transitRoutes.id],
      map(csvRecords(text.get("routes.txt") ?? ""), (r) =>
        r.route_id ? { feed: id, id: r.route_id, shortName: orNull(r.route_short_name), longName: orNull(r.route_long_name), type: numOrNull(r.route_type) } : null,
      ),
    );
    let trips = 0;
    await batches(
      ctx,
      beat,
      transitTrips,
      [transitTrips.feed, transitTrips.id],
      map(csvRecords(text.get("trips.txt")!), (t) => {
        if (!t.trip_id) return null;
        trips++;
        return { feed: id, id: t.trip_id, route: t.route_id, service: t.service_id, headsign: orNull(t.trip_headsign) };
      }),
    );
    await batches(
      ctx,
      beat,
      transitTimes,
      null,
      map(csvRecords(text.get("stop_times.txt")!), (t) => {
        if (!t.trip_id || !t.stop_id) return null;
        const arr = secondsOf(t.arrival_time);
        const dep = secondsOf(t.departure_time) ?? arr;
        return { feed: id, trip: t.trip_id, stop: t.stop_id, seq: Number(t.stop_sequence || 0), arrival: arr ?? dep, departure: dep, headsign: orNull(t.stop_headsign) };
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
      beat,
      transitCalendar,
      [transitCalendar.feed, transitCalendar.service],
      map(csvRecords(text.get("calendar.txt") ?? ""), (c) => {
        if (!c.service_id) return null;
        widen(c.start_date);
        widen(c.end_date);
        const days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"].map((d) => (c[d] === "1" ? "1" : "0")).join("");
        return { feed: id, service: c.service_id, days, start: c.start_date, end: c.end_date };
      }),
    );
    await batches(
      ctx,
      beat,
      transitDates,
      null,
      map(csvRecords(text.get("calendar_dates.txt") ?? ""), (d) => {
        if (!d.service_id || !d.date) return null;
        if (d.exception_type === "1") widen(d.date);
        return { feed: id, service: d.service_id, date: d.date, type: Number(d.exception_type) };
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
