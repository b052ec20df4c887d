import { index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Published GTFS timetables this instance carries (TRANSIT_FEEDS), one row per feed. */
export const transitFeeds = sqliteTable("transit_feeds", {
  id: text("id").primaryKey(),
  url: text("url").notNull(),
  name: text("name"),
  timezone: text("timezone"),
  /** Bytes of the archive as published. */
  size: integer("size"),
  hash: text("hash"),
  etag: text("etag"),
  lastModified: text("last_modified"),
  /** "importing" while rows are being replaced, "ready" after, "failed" with error. */
  state: text("state").notNull(),
  error: text("error"),
  checked: integer("checked"),
  imported: integer("imported"),
  /** First and last service dates, YYYYMMDD. */
  startDate: text("start_date"),
  endDate: text("end_date"),
  stops: integer("stops"),
  trips: integer("trips"),
});

export const transitStops = sqliteTable(
  "transit_stops",
  {
    feed: text("feed").notNull(),
    id: text("id").notNull(),
    code: text("code"),
    name: text("name").notNull(),
    lat: real("lat"),
    lon: real("lon"),
    parent: text("parent"),
    kind: integer("kind").notNull(),
  },
  (t) => [primaryKey({ columns: [t.feed, t.id] }), index("transit_stops_lat").on(t.lat), index("transit_stops_name").on(t.name), index("transit_stops_parent").on(t.feed, t.parent)],
);

export const transitRoutes = sqliteTable(
  "transit_routes",
  {
    feed: text("feed").notNull(),
    id: text("id").notNull(),
    shortName: text("short_name"),
    longName: text("long_name"),
    type: integer("type"),
  },
  (t) => [primaryKey({ columns: [t.feed, t.id] })],
);

export const transitTrips = sqliteTable(
  "transit_trips",
  {
    feed: text("feed").notNull(),
    id: text("id").notNull(),
    route: text("route").notNull(),
    service: text("service").notNull(),
    headsign: text("headsign"),
  },
  (t) => [primaryKey({ columns: [t.feed, t.id] })],
);

/** Stop times in seconds after the service day's noon-minus-12h, as GTFS counts them (may pass 24:00). */
export const transitTimes = sqliteTable(
  "transit_times",
  {
    feed: text("feed").notNull(),
    trip: text("trip").notNull(),
    stop: text("stop").notNull(),
    seq: integer("seq").notNull(),
    arrival: integer("arrival"),
    departure: integer("departure"),
    headsign: text("headsign"),
  },
  (t) => [index("transit_times_stop").on(t.feed, t.stop, t.departure)],
);

export const transitCalendar = sqliteTable(
  "transit_calendar",
  {
    feed: text("feed").notNull(),
    service: text("service").notNull(),
    /** Monday first: "1111100" runs on weekdays. */
    days: text("days").notNull(),
    start: text("start").notNull(),
    end: text("end").notNull(),
  },
  (t) => [primaryKey({ columns: [t.feed, t.service] })],
);

export const transitDates = sqliteTable(
  "transit_dates",
  {
    feed: text("feed").notNull(),
    service: text("service").notNull(),
    date: text("date").notNull(),
    /** 1 added, 2 removed. */
    type: integer("type").notNull(),
  },
  (t) => [index("transit_dates_date").on(t.feed, t.date)],
);

/** Sizes of published archives learnt from their headers, so a listing does not ask each time. */
export const transitSizes = sqliteTable("transit_sizes", {
  url: text("url").primaryKey(),
  size: integer("size"),
  checked: integer("checked").notNull(),
});
