import "./providers.ts";
import { Type as T, type Static } from "@sinclair/typebox";
import { HearthError, invalid, definePlugin, read, type Ctx, type About, freeWhenHeld } from "hearth";
import { keyOf, KEY } from "./google.ts";
import { journey, parseTime, spoken, type Mode } from "./journey.ts";
import { peekRoad } from "./osrm.ts";
import { coordinates, locate, resolve, type Point } from "./where.ts";

const RFC3339 = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|z|[+-]\\d{2}:\\d{2})$";
const Time = (what: string) => T.String({ pattern: RFC3339, description: `${what}, as an RFC3339 time such as 2026-11-21T08:30:00Z` });
const Lat = (what: string) => T.Number({ minimum: -90, maximum: 90, description: `Latitude of the ${what}.` });
const Lon = (what: string) => T.Number({ minimum: -180, maximum: 180, description: `Longitude of the ${what}.` });
const PlaceText = (what: string) => T.String({ minLength: 1, maxLength: 300, description: what });
const ModeArg = T.Union([T.Literal("drive"), T.Literal("walk"), T.Literal("cycle"), T.Literal("transit")], {
  default: "drive",
  description: "drive (default), walk, cycle, or transit (needs a configured provider).",
});

const JourneyArgs = T.Object({
  from: T.Optional(PlaceText("Where from: a place name or address.")),
  to: T.Optional(PlaceText("Where to: a place name or address.")),
  from_lat: T.Optional(Lat("start")),
  from_lon: T.Optional(Lon("start")),
  to_lat: T.Optional(Lat("destination")),
  to_lon: T.Optional(Lon("destination")),
  mode: ModeArg,
  depart_at: T.Optional(Time("When to leave (default now)")),
  arrive_by: T.Optional(Time("When to be there; the answer says when to leave")),
});
type JourneyArgs = Static<typeof JourneyArgs>;

const FROM = { name: "from", lat: "from_lat", lon: "from_lon" };
const TO = { name: "to", lat: "to_lat", lon: "to_lon" };
const ETA_PRICE = 2;
const DIRECTIONS_PRICE = 3;
const NEAREST_PRICE = 2;

const where = (p: Point) => ({ lat: p.lat, lon: p.lon, ...(p.place ? { place: p.place.display_name } : {}) });

/** Refuses what cannot be answered before any provider is asked. */
function check(a: { mode: Mode; depart_at?: string; arrive_by?: string }, ctx: Ctx) {
  if (a.depart_at !== undefined && a.arrive_by !== undefined) throw invalid("arrive_by", "depart_at and arrive_by cannot be combined: give one");
  const departAt = parseTime("depart_at", a.depart_at);
  const arriveBy = parseTime("arrive_by", a.arrive_by);
  if (a.mode === "transit") keyOf(ctx, "transit journeys");
  if (a.mode === "drive" && (departAt || arriveBy)) keyOf(ctx, "driving times for a given departure or arrival");
  return { departAt, arriveBy };
}

/** A priced route already in the cache is free; only coordinates can be checked before the call. */
function cachedRoad(a: JourneyArgs, ctx: unknown, steps: boolean): boolean | Promise<boolean> {
  if (a.mode === "transit" || a.depart_at || a.arrive_by || a.from || a.to) return false;
  // A configured traffic provider times every drive, and its answers are not the road cache's.
  if (a.mode === "drive" && (ctx as Ctx).config[KEY]) return false;
  if (a.from_lat === undefined || a.from_lon === undefined || a.to_lat === undefined || a.to_lon === undefined) return false;
  return peekRoad(ctx as Ctx, a.mode, { lat: a.from_lat, lon: a.from_lon }, { lat: a.to_lat, lon: a.to_lon }, steps);
}

async function plan(a: JourneyArgs, ctx: Ctx, steps: boolean) {
  const { departAt, arriveBy } = check(a, ctx);
  const from = (await locate(ctx, { name: a.from, lat: a.from_lat, lon: a.from_lon }, FROM, true))!;
  const to = (await locate(ctx, { name: a.to, lat: a.to_lat, lon: a.to_lon }, TO, true))!;
  const j = await journey(ctx, a.mode, from, to, { departAt, arriveBy, steps });
  return {
    answer: {
      mode: a.mode,
      from: where(from),
      to: where(to),
      distance_m: j.distance_m,
      duration_s: j.duration_s,
      duration: spoken(j.duration_s),
      depart_at: j.depart_at,
      arrive_at: j.arrive_at,
      ...(arriveBy ? { arrive_by: arriveBy.toISOString(), leave_at: j.depart_at } : {}),
      ...(j.late ? { late: true, note: "arrive_by cannot be met even leaving now; arrive_at is the earliest arrival" } : {}),
      traffic: j.traffic,
      ...(j.free_flow_s !== undefined ? { free_flow_s: j.free_flow_s, traffic_delay_s: Math.max(0, j.duration_s - j.free_flow_s) } : {}),
      ...(j.summary ? { via: j.summary } : {}),
      ...(a.mode === "drive" && !j.traffic ? { note: `a free-flow driving time with no traffic in it; set ${KEY} for traffic-aware times` } : {}),
    },
    steps: j.steps,
    sources: j.sources,
  };
}

export default definePlugin({
  name: "routes",
  description: `Travel time and turn-by-turn directions by road (OSRM: drive, walk, cycle), and by public transport or with live traffic through a configured provider (${KEY}).`,
  needs: ["http"],
  providers: ["GOOGLE_ROUTES", "NOMINATIM", "OSRM", "OSRM_BIKE", "OSRM_FOOT"],
  config: {
    OSRM_URL: { default: "", description: "Base URL of an OSRM server with a car profile (https://router.project-osrm.org when empty)." },
    OSRM_FOOT_URL: { default: "", description: "Base URL of an OSRM server with a foot profile (https://routing.openstreetmap.de/routed-foot when empty)." },
    OSRM_BIKE_URL: { default: "", description: "Base URL of an OSRM server with a bicycle profile (https://routing.openstreetmap.de/routed-bike when empty)." },
    [KEY]: { default: "", description: "A Google Maps Platform key with the Routes API enabled: transit journeys and traffic-aware driving times. Without it those answer 501." },
    GOOGLE_ROUTES_URL: { default: "", description: "Base URL of the Routes API (https://routes.googleapis.com when empty)." },
  },
  methods: {
    eta: read({
      description:
        "Travel time and distance from one place to another (names are geocoded, or give coordinates). mode drive (default), walk or cycle uses free-flow road times; with depart_at a drive is timed in the traffic expected then, and transit reads timetables — both through the configured provider. With arrive_by, says when to leave. depart_at and arrive_by cannot be combined.",
      args: JourneyArgs,
      access: "public",
      openWorld: true,
      price: (a, ctx) => freeWhenHeld(cachedRoad(a, ctx, false), ETA_PRICE),
      async run(a, ctx) {
        const p = await plan(a, ctx, false);
        return { ...p.answer, sources: p.sources };
      },
    }),

    directions: read({
      description: "Turn-by-turn route from one place to another, each instruction with its distance in metres, plus the totals eta gives. Same arguments as eta; costs more than eta.",
      args: JourneyArgs,
      access: "public",
      openWorld: true,
      price: (a, ctx) => freeWhenHeld(cachedRoad(a, ctx, true), DIRECTIONS_PRICE),
      async run(a, ctx) {
        const p = await plan(a, ctx, true);
        return { ...p.answer, steps: p.steps, sources: p.sources };
      },
    }),

    nearest: read({
      description: `Which of several destinations is quickest to reach from one place, and all of them in order. Each destination is a place name, an address or "lat,lon", and a separate routing lookup, priced ${NEAREST_PRICE} credits each; at most 10.`,
      args: T.Object({
        from: T.Optional(PlaceText("Where from: a place name or address.")),
        from_lat: T.Optional(Lat("start")),
        from_lon: T.Optional(Lon("start")),
        to: T.Array(PlaceText('A destination: a place name, an address or "lat,lon".'), {
          minItems: 1,
          maxItems: 10,
          description: "The destinations to compare, 1 to 10. In a query string repeat to= for each; a lone to= is split at its commas, so send a single address or \"lat,lon\" in a POST body.",
        }),
        mode: ModeArg,
      }),
      access: "public",
      openWorld: true,
      price: (a) => NEAREST_PRICE * a.to.length,
      async run(a, ctx) {
        check({ mode: a.mode }, ctx);
        const from = (await locate(ctx, { name: a.from, lat: a.from_lat, lon: a.from_lon }, FROM, true))!;
        const sources: About[] = [];
        const rows = [];
        for (const [i, text] of a.to.entries()) {
          const point = coordinates(text);
          let dest: Point;
          if (point === "off-earth") throw invalid("to", `to[${i}] "${text}" is not a latitude,longitude on Earth`);
          if (point) dest = point;
          else {
            const { place } = await resolve(ctx, "to", text).catch((e) => {
              throw e instanceof HearthError && e.kind === "invalid_argument" ? invalid("to", `no place found for to[${i}] "${text}"`) : e;
            });
            dest = { lat: place.lat, lon: place.lon, place };
          }
          try {
            const j = await journey(ctx, a.mode, from, dest, { steps: false });
            sources.push(...j.sources);
            rows.push({ to: text, ...where(dest), reachable: true as const, distance_m: j.distance_m, duration_s: j.duration_s, duration: spoken(j.duration_s) });
          } catch (e) {
            if (!(e instanceof HearthError) || e.kind !== "not_found") throw e;
            rows.push({ to: text, ...where(dest), reachable: false as const, reason: e.message });
          }
        }
        const order = [...rows].sort((x, y) => (x.reachable ? (x as { duration_s: number }).duration_s : Infinity) - (y.reachable ? (y as { duration_s: number }).duration_s : Infinity));
        const quickest = order.find((r) => r.reachable) ?? null;
        return {
          mode: a.mode,
          from: where(from),
          quickest: quickest ? quickest.to : null,
          destinations: order.map((r, i) => ({ rank: i + 1, ...r })),
          sources: dedupe(sources),
        };
      },
    }),
  },
});

function dedupe(list: About[]): About[] {
  const seen = new Map<string, About>();
  for (const a of list) {
    const prev = seen.get(a.source);
    // One entry per provider, speaking for its oldest copy.
    if (!prev || a.age_seconds > prev.age_seconds) seen.set(a.source, { ...a, cached: (prev?.cached ?? true) && a.cached });
  }
  return [...seen.values()];
}
