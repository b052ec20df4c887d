import { Type as T } from "@sinclair/typebox";
import { invalid, definePlugin, read, type Ctx } from "hearth";
import { around, byCallsign, byRegistration, type Aircraft } from "./adsb.ts";
import { airlinesFor } from "./airlines.ts";
import { airportOrFail, describeAirport, findAirport, nearestAirport, type Airport } from "./airports.ts";
import { bearing, compass, distanceNm } from "./geometry.ts";
import { phaseAt, PHASES } from "./phase.ts";

const MAX_LISTED = 50;
const AIRPORT_RADIUS_NM = 15;

const Lat = T.Number({ minimum: -90, maximum: 90, description: "Latitude in decimal degrees." });
const Lon = T.Number({ minimum: -180, maximum: 180, description: "Longitude in decimal degrees." });

interface Point {
  lat: number;
  lon: number;
  label: string;
  airport?: Airport;
}

const LAT_LON = /^\s*(-?\d{1,3}(?:\.\d+)?)\s*,\s*(-?\d{1,3}(?:\.\d+)?)\s*$/;

// A place is a "lat,lon", an airport's code or name, or anything the geocoder knows.
async function pointOf(ctx: Ctx, near: string): Promise<Point> {
  const m = LAT_LON.exec(near);
  if (m) {
    const lat = Number(m[1]);
    const lon = Number(m[2]);
    if (Math.abs(lat) > 90 || Math.abs(lon) > 180) throw invalid("near", `near "${near}" is not a latitude,longitude on Earth`);
    return { lat, lon, label: `${lat},${lon}` };
  }
  const code = /^[A-Za-z]{3,4}$/.test(near.trim()) || /\b(airport|aeroporto|aeropuerto|aéroport|flughafen)\b/i.test(near);
  if (code) {
    const a = await findAirport(near, "near");
    if (a) return { lat: a.lat, lon: a.lon, label: a.name, airport: a };
  }
  const g = (await ctx.call("places", "geocode", { address: near })) as { places: { lat: number; lon: number; display_name: string }[] };
  const p = g.places[0];
  return { lat: p.lat, lon: p.lon, label: p.display_name };
}

function seen(a: Aircraft, from: { lat: number; lon: number }) {
  const d = distanceNm(from, a);
  const dir = bearing(from, a);
  return {
    callsign: a.callsign,
    registration: a.registration,
    type: a.type,
    ...(a.description ? { description: a.description } : {}),
    hex: a.hex,
    lat: a.lat,
    lon: a.lon,
    on_ground: a.on_ground,
    altitude_ft: a.altitude_ft,
    speed_kt: a.speed_kt,
    heading_deg: a.heading_deg,
    vertical_rate_fpm: a.vertical_rate_fpm,
    distance_nm: Math.round(d * 10) / 10,
    direction: d < 0.05 ? null : compass(dir),
    bearing_deg: Math.round(dir),
    squawk: a.squawk,
    ...(a.emergency ? { emergency: a.emergency } : {}),
    position_age_s: a.position_age_s,
  };
}

const NOT_CANCELLED =
  "Absence here does not mean the flight is cancelled or late: the aircraft may be on the ground with its transponder off, over an ocean or a region with no receivers, not yet departed, already landed, or broadcasting a callsign that differs from the flight number.";

interface Lookup {
  kind: "registration" | "callsign" | "flight number";
  asked: string[];
}

/** What to ask the aggregator for a flight number, callsign or registration. */
async function lookupsFor(flight: string): Promise<Lookup[]> {
  const q = flight.trim().toUpperCase().replace(/\s+/g, "");
  if (!/^[A-Z0-9-]{2,10}$/.test(q)) throw invalid("flight", `flight "${flight}" is not a flight number (BA117), callsign (BAW117) or registration (G-XLEA)`);
  const out: Lookup[] = [];
  if (q.includes("-")) {
    // Light aircraft often broadcast their registration, without the dash, as their callsign.
    out.push({ kind: "registration", asked: [q] }, { kind: "callsign", asked: [q.replace(/-/g, "")] });
    return out;
  }
  const iata = /^([A-Z0-9]{2})(\d{1,4})([A-Z]?)$/.exec(q);
  if (iata && /[A-Z]/.test(iata[1])) {
    const airlines = await airlinesFor(iata[1]);
    const number = String(Number(iata[2])) + iata[3];
    if (airlines.length) out.push({ kind: "flight number", asked: airlines.slice(0, 3).map((a) => a.icao + number) });
  }
  out.push({ kind: "callsign", asked: [q] });
  if (/^N\d{1,5}[A-Z]{0,2}$/.test(q)) out.push({ kind: "registration", asked: [q] });
  return out;
}

export default definePlugin({
  name: "flights",
  description:
    "Live aircraft positions from the community ADS-B network (adsb.lol, keyless): what is overhead, where a flight is now, and the traffic at an airport. Positions, not timetables.",
  needs: ["http", "call"],
  // "near" a place is found through the geocoder.
  requires: ["places?"],
  providers: ["ADSB"],
  config: {
    ADSB_URL: {
      default: "",
      description: "Base URL of a readsb v2 ADS-B API (https://api.adsb.lol when empty; https://api.airplanes.live serves the same paths).",
    },
  },
  methods: {
    overhead: read({
      description: `Aircraft near a place, airport (name or code) or lat and lon, nearest first, with altitude (feet), ground speed (knots), heading, distance (nautical miles) and direction from the point. \`radius\` in nautical miles, default 30, at most 250. At most ${MAX_LISTED} are listed; \`count\` says how many are in range.`,
      args: T.Object({
        near: T.Optional(T.String({ minLength: 1, maxLength: 300, description: "A place name, an airport's name or IATA/ICAO code, or \"lat,lon\"." })),
        lat: T.Optional(Lat),
        lon: T.Optional(Lon),
        radius: T.Number({ exclusiveMinimum: 0, maximum: 250, default: 30, description: "Nautical miles around the point (default 30, at most 250)." }),
      }),
      access: "public",
      openWorld: true,
      async run({ near, lat, lon, radius }, ctx) {
        const hasPoint = lat !== undefined || lon !== undefined;
        if (near !== undefined && hasPoint) throw invalid("near", "give near or lat and lon, not both");
        let at: Point;
        if (hasPoint) {
          if (lat === undefined) throw invalid("lat", "lat is needed with lon");
          if (lon === undefined) throw invalid("lon", "lon is needed with lat");
          at = { lat, lon, label: `${lat},${lon}` };
        } else if (near !== undefined && near.trim() !== "") at = await pointOf(ctx, near);
        else throw invalid("near", "give near (a place, airport name or code) or lat and lon");
        const f = await around(ctx, at.lat, at.lon, radius);
        const all = f.data.aircraft
          .map((a) => seen(a, at))
          .filter((a) => a.distance_nm <= radius)
          .sort((x, y) => x.distance_nm - y.distance_nm);
        return {
          center: { lat: at.lat, lon: at.lon, place: at.label, ...(at.airport ? { airport: describeAirport(at.airport) } : {}) },
          radius_nm: radius,
          count: all.length,
          aircraft: all.slice(0, MAX_LISTED),
          ...(all.length > MAX_LISTED ? { note: `${all.length} aircraft are in range; the nearest ${MAX_LISTED} are listed. A smaller radius lists fewer.` } : {}),
          ...(all.length === 0 ? { note: "No aircraft with a position are in range of a receiver right now." } : {}),
          positions_at: f.data.at,
          ...f.about,
        };
      },
    }),

    track: read({
      description:
        "Where a flight is now, by flight number (BA117), radio callsign (BAW117) or registration (G-XLEA): position, altitude, speed, heading. Only aircraft in range of a receiver are seen; an aircraft not seen is reported as not in range, which never means cancelled.",
      args: T.Object({ flight: T.String({ minLength: 1, maxLength: 20, description: "A flight number, radio callsign or aircraft registration." }) }),
      access: "public",
      openWorld: true,
      async run({ flight }, ctx) {
        const lookups = await lookupsFor(flight);
        const asked: string[] = [];
        let about = null;
        for (const l of lookups)
          for (const q of l.asked) {
            if (asked.includes(`${l.kind === "registration" ? "reg" : "callsign"}:${q}`)) continue;
            asked.push(`${l.kind === "registration" ? "reg" : "callsign"}:${q}`);
            const f = l.kind === "registration" ? await byRegistration(ctx, q) : await byCallsign(ctx, q);
            about = f.about;
            if (f.data.aircraft.length)
              return {
                flight,
                status: "in range",
                matched: { as: l.kind === "flight number" ? "callsign" : l.kind, value: q },
                aircraft: await Promise.all(
                  f.data.aircraft.map(async (a) => {
                    const { distance_nm, direction, bearing_deg, ...rest } = seen(a, a);
                    const near = await nearestAirport(a, 100);
                    return {
                      ...rest,
                      ...(near ? { near_airport: { ...describeAirport(near.airport), distance_nm: near.distance_nm, direction: near.direction } } : {}),
                    };
                  }),
                ),
                positions_at: f.data.at,
                ...f.about,
              };
          }
        return {
          flight,
          status: "not in range",
          asked: asked.map((a) => a.replace(/^callsign:/, "callsign ").replace(/^reg:/, "registration ")),
          message: `No aircraft matching ${flight} is in range of an ADS-B receiver now. ${NOT_CANCELLED}`,
          ...(about ?? {}),
        };
      },
    }),

    airport: read({
      description: `Live traffic at and around an airport (IATA or ICAO code, or name) within ${AIRPORT_RADIUS_NM} nautical miles: aircraft on the ground, on approach (descending towards it) and climbing out (climbing away), and others passing. Positions, not a timetable.`,
      args: T.Object({ code: T.String({ minLength: 2, maxLength: 100, description: "An airport's IATA code (LHR), ICAO code (EGLL) or name." }) }),
      access: "public",
      openWorld: true,
      async run({ code }, ctx) {
        const a = await airportOrFail(code, "code");
        const f = await around(ctx, a.lat, a.lon, AIRPORT_RADIUS_NM);
        const groups: Record<(typeof PHASES)[number], ReturnType<typeof seen>[]> = { on_ground: [], approaching: [], climbing_out: [], passing: [] };
        for (const ac of f.data.aircraft) {
          const s = seen(ac, a);
          if (s.distance_nm > AIRPORT_RADIUS_NM) continue;
          groups[phaseAt(ac, a)].push(s);
        }
        for (const g of Object.values(groups)) g.sort((x, y) => x.distance_nm - y.distance_nm);
        return {
          airport: describeAirport(a),
          radius_nm: AIRPORT_RADIUS_NM,
          counts: Object.fromEntries(Object.entries(groups).map(([k, v]) => [k, v.length])),
          ...groups,
          note: "Live positions from ADS-B receivers, not a timetable: flights not yet airborne or out of receiver range do not appear.",
          positions_at: f.data.at,
          ...f.about,
        };
      },
    }),
  },
});
