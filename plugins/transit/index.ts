import { Type as T } from "@sinclair/typebox";
import { invalid, notConfigured, notFound, definePlugin, read, type Ctx } from "hearth";
import { busesIn } from "./bods.ts";
import { carriedFeeds, importsUnderWay, warm, type FeedRow } from "./carried.ts";
import { catalogue } from "./catalogue.ts";
import { configuredFeeds } from "./feeds-config.ts";
import { localNow } from "./gtfs-time.ts";
import { board } from "./rail.ts";
import { knownSizes } from "./sizes.ts";
import { arrivals as liveArrivals, inLondon, lineStatus, searchStops, STATUS_MODES, stopsAround } from "./tfl.ts";
import { dueAt, metres, stopById, stopsByName, stopsNear, validity, withChildren, type GtfsStop } from "./timetable.ts";

const Lat = T.Number({ minimum: -90, maximum: 90, description: "Latitude in decimal degrees." });
const Lon = T.Number({ minimum: -180, maximum: 180, description: "Longitude in decimal degrees." });

// NaPTAN codes TfL answers for: stations (940G…, 910G…), bus stops (490…), hubs.
const TFL_ID = /^(940G|910G|930G|490|HUB)[A-Z0-9]+$/i;
const COMPASS = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"];

const ready = (rows: { row: FeedRow | undefined }[]) => rows.map((r) => r.row).filter((r): r is FeedRow => r?.state === "ready");
const today = (ctx: Ctx) => localNow(ctx.clock.now(), "UTC").date;
// A feed's URL may carry a publisher's token in its query: answers show the rest.
const shown = (url: string) => {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
};

function live(ctx: Ctx, stop: { id: string; name: string }) {
  return liveArrivals(ctx, stop.id).then((f) => ({
    stop: { id: stop.id, name: f.data[0]?.stop || stop.name },
    live: true,
    count: f.data.length,
    arrivals: f.data,
    ...(f.data.length === 0 ? { note: "Nothing is predicted at this stop in the next half hour or so (TfL predicts about that far ahead)." } : {}),
    ...f.about,
  }));
}

async function timetable(ctx: Ctx, feeds: FeedRow[], stops: GtfsStop[]) {
  const first = stops[0];
  const feed = feeds.find((f) => f.id === first.feed)!;
  const withPlatforms = await Promise.all(stops.filter((s) => s.feed === feed.id).map((s) => withChildren(ctx.db, s)));
  const ids = [...new Set(withPlatforms.flat().map((s) => s.id))];
  const due = await dueAt(ctx.db, feed, ids, ctx.clock.now());
  const v = validity(feed, today(ctx));
  return {
    stop: { id: first.id, name: first.name, feed: feed.id, ...(first.lat !== null ? { lat: first.lat, lon: first.lon } : {}) },
    live: false,
    timetable: true,
    count: due.length,
    arrivals: due,
    note:
      `From the published timetable of ${feed.name ?? feed.id}, not live: times are as scheduled, with no delays or cancellations.` +
      (v.expired ? ` This timetable ended on ${v.valid_to} and may no longer match the service.` : "") +
      (due.length === 0 ? " Nothing is timetabled here in the next two hours." : ""),
    source: `${feed.name ?? feed.id} (GTFS timetable)`,
    feed: { id: feed.id, name: feed.name, ...v, imported_at: feed.imported ? new Date(feed.imported).toISOString() : null },
  };
}

const normal = (s: string) =>
  s
    .toLowerCase()
    .replace(/\b(underground|rail|dlr|tram|overground)?\s*(station|stop)\b/g, "")
    .replace(/[^a-z0-9]+/g, " ")
    .trim();

export default definePlugin({
  name: "transit",
  description:
    "Public transport: London live from TfL (arrivals, line status, stops), elsewhere the published GTFS timetables this instance imports; National Rail live boards and live bus positions in England with their keys.",
  needs: ["http", "bytes", "db", "writes", "lock"],
  providers: ["BODS", "GTFS", "LDBWS", "MOBILITY_DATABASE", "TFL"],
  config: {
    TRANSIT_FEEDS: {
      default: "",
      description: "Published GTFS timetables to import, as zip URLs separated by commas or spaces, each optionally named name=URL. Refreshed weekly.",
    },
    TFL_URL: { default: "", description: "Base URL of the TfL Unified API (https://api.tfl.gov.uk when empty)." },
    TFL_APP_KEY: { default: "", description: "Optional TfL app key, for a higher rate limit than anonymous use." },
    LDBWS_TOKEN: { default: "", description: "Rail Data Marketplace key for the Live Arrival and Departure Boards (LDBWS) product; without it transit/trains answers 501." },
    LDBWS_URL: { default: "", description: "Base URL of the LDBWS JSON API (the Rail Data Marketplace product URL when empty)." },
    BODS_API_KEY: { default: "", description: "Bus Open Data Service API key (free, from the BODS site); without it transit/buses answers 501." },
    BODS_URL: { default: "", description: "Base URL of the Bus Open Data Service (https://data.bus-data.dft.gov.uk when empty)." },
    MOBILITY_DATABASE_URL: { default: "", description: "Base URL serving the Mobility Database feed catalogue CSV (https://files.mobilitydatabase.org when empty)." },
  },
  async start(ctx) {
    await warm(ctx);
  },
  async stop() {
    await Promise.allSettled(importsUnderWay());
  },
  methods: {
    arrivals: read({
      description:
        "What is due at a stop, soonest first. In London live from TfL (buses, tube, DLR, Overground, Elizabeth line, trams) by stop name or NaPTAN id; elsewhere from the published GTFS timetables this instance carries, and the answer says it is the timetable, not live.",
      args: T.Object({ stop: T.String({ minLength: 1, maxLength: 200, description: "A stop or station name, or its id (a NaPTAN code such as 940GZZLUOXC, or a timetable's stop id)." }) }),
      access: "public",
      openWorld: true,
      async run({ stop }, ctx) {
        const q = stop.trim();
        if (!q) throw invalid("stop", "stop is empty: give a stop or station name or id");
        if (TFL_ID.test(q)) return live(ctx, { id: q.toUpperCase(), name: q });
        const feeds = ready(await carriedFeeds(ctx));
        const ids = feeds.map((f) => f.id);
        const byId = await stopById(ctx.db, ids, q);
        if (byId.length) return timetable(ctx, feeds, byId);
        // In London the live answer wins over a national timetable that also lists the stop.
        const exact = (await stopsByName(ctx.db, ids, q, true)).filter((s) => s.lat === null || !inLondon(s.lat, s.lon!));
        if (exact.length) return timetable(ctx, feeds, exact);
        const matches = (await searchStops(ctx, q)).data;
        if (matches.length) {
          const best = matches.find((m) => normal(m.name) === normal(q)) ?? matches[0];
          return live(ctx, best);
        }
        const partial = await stopsByName(ctx.db, ids, q, false);
        if (partial.length) return timetable(ctx, feeds, partial);
        throw notFound(
          `no stop called "${stop}" in London (TfL) or in the timetables carried here${feeds.length ? "" : " (none are: TRANSIT_FEEDS lists the timetables to import)"}`,
        );
      },
    }),

    status: read({
      description: `Line status in London from TfL: lines delayed, part-suspended or closed and why, and which have a good service. \`modes\` is a comma-separated list from ${STATUS_MODES.join(", ")} (default all).`,
      args: T.Object({ modes: T.Optional(T.String({ maxLength: 100, description: `Comma-separated modes: ${STATUS_MODES.join(", ")}.` })) }),
      access: "public",
      openWorld: true,
      async run({ modes }, ctx) {
        const asked = modes === undefined || modes.trim() === "" ? [...STATUS_MODES] : [...new Set(modes.split(",").map((m) => m.trim().toLowerCase()).filter(Boolean))];
        for (const m of asked)
          if (!(STATUS_MODES as readonly string[]).includes(m)) throw invalid("modes", `"${m}" is not a mode TfL reports status for: ${STATUS_MODES.join(", ")}`);
        const f = await lineStatus(ctx, asked);
        const lines = f.data.map((l) => {
          const worst = [...l.statuses].sort((a, b) => a.severity - b.severity)[0] ?? { severity: 10, status: "Good Service", reason: null, until: null };
          return {
            line: l.line,
            id: l.id,
            mode: l.mode,
            status: [...new Set(l.statuses.map((s) => s.status))].join(", ") || worst.status,
            good: l.statuses.every((s) => s.severity === 10 || s.severity === 18 || s.severity === 19),
            reasons: [...new Set(l.statuses.map((s) => s.reason).filter((r): r is string => !!r))],
            ...(worst.until ? { until: worst.until } : {}),
          };
        });
        const disrupted = lines.filter((l) => !l.good).map(({ good, ...l }) => l);
        const good = lines.filter((l) => l.good).map((l) => l.line);
        return {
          modes: asked,
          summary: disrupted.length === 0 ? "Good service on all lines asked about." : `${disrupted.length} of ${lines.length} lines have problems: ${disrupted.map((d) => `${d.line} (${d.status})`).join("; ")}.`,
          disrupted,
          good_service: good,
          ...f.about,
        };
      },
    }),

    nearby: read({
      description:
        "Stops and stations near a point, nearest first, with their ids (for transit/arrivals): from TfL in London and from the timetables carried here elsewhere. `radius` in metres, default 400, at most 2000.",
      args: T.Object({
        lat: Lat,
        lon: Lon,
        radius: T.Number({ minimum: 1, maximum: 2000, default: 400, description: "Metres around the point (default 400, at most 2000)." }),
      }),
      access: "public",
      openWorld: true,
      async run({ lat, lon, radius }, ctx) {
        const stops: Record<string, unknown>[] = [];
        let about = {};
        if (inLondon(lat, lon)) {
          const f = await stopsAround(ctx, lat, lon, radius);
          about = f.about;
          for (const s of f.data)
            stops.push({ id: s.id, name: s.name, ...(s.indicator ? { indicator: s.indicator } : {}), lat: s.lat, lon: s.lon, distance_m: s.distance_m, modes: s.modes, lines: s.lines, live: true });
        }
        const feeds = ready(await carriedFeeds(ctx));
        for (const s of await stopsNear(ctx.db, feeds.map((f) => f.id), lat, lon, radius))
          stops.push({ id: s.id, name: s.name, ...(s.code ? { code: s.code } : {}), lat: s.lat, lon: s.lon, distance_m: s.distance_m, feed: s.feed, live: false });
        stops.sort((a, b) => (a.distance_m as number) - (b.distance_m as number));
        return {
          center: { lat, lon },
          radius_m: radius,
          count: stops.length,
          stops,
          ...(stops.length === 0
            ? { note: inLondon(lat, lon) ? "No stops within the radius." : "Outside London, stops come from the timetables carried here (TRANSIT_FEEDS), and none of them has a stop within the radius." }
            : {}),
          ...about,
        };
      },
    }),

    feeds: read({
      description:
        "The published GTFS timetables this instance carries (with archive size, validity and whether each has expired) and, for a `country` (two-letter code), those it could carry from the Mobility Database catalogue, with sizes where the publisher states them.",
      args: T.Object({ country: T.Optional(T.String({ minLength: 1, maxLength: 10, description: "Two-letter country code (GB, FR, US...)." })) }),
      access: "public",
      openWorld: true,
      async run({ country }, ctx) {
        const code = country?.trim().toUpperCase();
        if (code !== undefined && !/^[A-Z]{2}$/.test(code)) throw invalid("country", `country must be a two-letter code such as GB (got "${country}")`);
        const day = today(ctx);
        const rows = await carriedFeeds(ctx);
        const carried = rows.map(({ feed, row }) => {
          const v = row ? validity(row, day) : { valid_from: null, valid_to: null, expired: false };
          return {
            id: feed.id,
            name: row?.name ?? null,
            url: shown(feed.url),
            state: row?.state ?? "not imported",
            size_bytes: row?.size ?? null,
            ...v,
            stops: row?.stops ?? null,
            trips: row?.trips ?? null,
            imported_at: row?.imported ? new Date(row.imported).toISOString() : null,
            ...(row?.error ? { error: row.error } : {}),
          };
        });
        const expired = carried.filter((c) => c.expired).map((c) => ({ id: c.id, name: c.name, ended: c.valid_to }));
        const unusable = configuredFeeds(ctx.config.TRANSIT_FEEDS).unusable;
        const out: Record<string, unknown> = {
          carried,
          expired,
          ...(unusable ? { unusable_settings: unusable.map((u) => `TRANSIT_FEEDS entry "${u}" is not an http(s) URL and is ignored`) } : {}),
          ...(carried.length === 0 ? { note: "No timetables are carried: TRANSIT_FEEDS lists the GTFS archives to import." } : {}),
        };
        if (!code) return { ...out, available_note: "Give country (a two-letter code) to see the published timetables this instance could carry there." };
        const cat = await catalogue(ctx);
        const urls = new Set(rows.map((r) => r.feed.url));
        const listed = cat.data.filter((l) => l.country === code);
        const sizes = await knownSizes(ctx, listed.map((l) => l.url));
        return {
          ...out,
          country: code,
          available_count: listed.length,
          available: listed.map((l) => ({
            id: l.id,
            provider: l.provider,
            name: l.name,
            place: l.place,
            url: l.url,
            size_bytes: sizes.get(l.url) ?? null,
            carried: l.urls.some((u) => urls.has(u)),
            status: l.status,
            // The catalogue marks a feed inactive once its publisher stops keeping it current.
            expired: l.status === "inactive",
            license: l.license,
          })),
          expired_available: listed.filter((l) => l.status === "inactive").map((l) => ({ id: l.id, provider: l.provider, name: l.name })),
          ...cat.about,
        };
      },
    }),

    trains: read({
      description:
        "Live departure board (or arrivals with `arrivals: true`) at a British railway station by its three-letter code (KGX, MAN): scheduled and expected times, platform, operator, destination, cancellations and delay reasons, and station messages. `rows` 1 to 20, default 10. Needs LDBWS_TOKEN.",
      args: T.Object({
        station: T.Optional(T.String({ minLength: 1, maxLength: 10, description: "The station's three-letter CRS code, e.g. KGX." })),
        rows: T.Integer({ minimum: 1, maximum: 20, default: 10, description: "Services to list, 1 to 20 (default 10)." }),
        arrivals: T.Boolean({ default: false, description: "true for the arrivals board." }),
      }),
      access: "public",
      openWorld: true,
      async run({ station, rows, arrivals }, ctx) {
        if (station === undefined) throw invalid("station", "station is required: a three-letter station code such as KGX");
        const crs = station.trim().toUpperCase();
        if (!/^[A-Z]{3}$/.test(crs)) throw invalid("station", `station must be a three-letter station code such as KGX (got "${station}")`);
        if (!ctx.config.LDBWS_TOKEN) throw notConfigured("live train boards need LDBWS_TOKEN: a key for the Live Arrival and Departure Boards product on the Rail Data Marketplace");
        const f = await board(ctx, crs, rows, arrivals);
        return {
          station: f.data.station,
          crs: f.data.crs,
          board: arrivals ? "arrivals" : "departures",
          generated_at: f.data.generated_at,
          count: f.data.services.length,
          services: f.data.services,
          messages: f.data.messages,
          ...(f.data.services.length === 0 ? { note: `No ${arrivals ? "arrivals" : "departures"} are shown at ${f.data.station} for the next two hours.` } : {}),
          ...f.about,
        };
      },
    }),

    buses: read({
      description:
        "Live bus positions in England near a point, nearest first, with line, operator, destination, heading and distance, from the Bus Open Data Service. A position, not a prediction. `within_km` default 2, at most 25; `limit` default 10. Needs BODS_API_KEY.",
      args: T.Object({
        lat: T.Optional(Lat),
        lon: T.Optional(Lon),
        within_km: T.Number({ exclusiveMinimum: 0, maximum: 25, default: 2, description: "Kilometres around the point (default 2, at most 25)." }),
        limit: T.Integer({ minimum: 1, maximum: 100, default: 10, description: "Buses to list (default 10, at most 100)." }),
      }),
      access: "public",
      openWorld: true,
      async run({ lat, lon, within_km, limit }, ctx) {
        if (lat === undefined) throw invalid("lat", "lat is required: the latitude to look around");
        if (lon === undefined) throw invalid("lon", "lon is required: the longitude to look around");
        if (!ctx.config.BODS_API_KEY) throw notConfigured("live bus positions need BODS_API_KEY: a free key from the Bus Open Data Service");
        const dLat = within_km / 111.32;
        const dLon = within_km / (111.32 * Math.max(0.01, Math.cos((lat * Math.PI) / 180)));
        const f = await busesIn(ctx, { minLon: lon - dLon, minLat: lat - dLat, maxLon: lon + dLon, maxLat: lat + dLat });
        const now = ctx.clock.now().getTime();
        // A vehicle that has not reported for half an hour has left service or lost its feed.
        const fresh = f.data.buses.filter((b) => !b.recorded_at || now - Date.parse(b.recorded_at) < 30 * 60_000);
        const near = fresh
          .map((b) => ({ b, d: metres(lat, lon, b.lat, b.lon) / 1000 }))
          .filter((x) => x.d <= within_km)
          .sort((x, y) => x.d - y.d);
        return {
          center: { lat, lon },
          within_km,
          count: near.length,
          buses: near.slice(0, limit).map(({ b, d }) => ({
            line: b.line,
            operator: b.operator,
            destination: b.destination,
            origin: b.origin,
            direction: b.direction,
            lat: b.lat,
            lon: b.lon,
            bearing_deg: b.bearing,
            heading: b.bearing === null ? null : COMPASS[Math.round(b.bearing / 45) % 8],
            distance_km: Math.round(d * 100) / 100,
            recorded_at: b.recorded_at,
            age_s: b.recorded_at ? Math.max(0, Math.round((now - Date.parse(b.recorded_at)) / 1000)) : null,
            vehicle: b.vehicle,
          })),
          note: "Where each bus last reported itself, not a prediction of arrival. England only.",
          positions_at: f.data.at,
          ...f.about,
        };
      },
    }),
  },
});
