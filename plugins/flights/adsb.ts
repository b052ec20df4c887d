// Live aircraft positions from a community ADS-B aggregator. adsb.lol and
// airplanes.live serve the same readsb "v2" API keyless (ADSB_URL picks
// one); both answer {"ac": [...], "now": ms, "msg": "No error", ...}.
import { type Fetched, defineProvider, type Ctx } from "hearth";

defineProvider({
  name: "ADSB",
  label: "adsb.lol",
  url: "https://api.adsb.lol",
  attribution: "ADS-B data from adsb.lol contributors, ODbL 1.0",
  concurrency: 2,
  rate: { count: 1, perMs: 1000 },
});

export interface Aircraft {
  hex: string;
  callsign: string | null;
  registration: string | null;
  type: string | null;
  description: string | null;
  lat: number;
  lon: number;
  on_ground: boolean;
  /** Pressure altitude in feet; null on the ground or when not sent. */
  altitude_ft: number | null;
  speed_kt: number | null;
  heading_deg: number | null;
  vertical_rate_fpm: number | null;
  squawk: string | null;
  emergency: string | null;
  /** Seconds since the position was received. */
  position_age_s: number | null;
}

export interface Sighting {
  aircraft: Aircraft[];
  /** When the aggregator made the answer. */
  at: string | null;
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : null);
const str = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v.trim() : null);

export function parseAircraft(body: unknown): Sighting {
  if (!body || typeof body !== "object") throw new Error("not an object");
  const b = body as Record<string, unknown>;
  const list = Array.isArray(b.ac) ? b.ac : Array.isArray(b.aircraft) ? b.aircraft : b.ac === null ? [] : null;
  if (!list) throw new Error("no aircraft list");
  const aircraft: Aircraft[] = [];
  for (const raw of list) {
    if (!raw || typeof raw !== "object") continue;
    const a = raw as Record<string, unknown>;
    const lat = num(a.lat);
    const lon = num(a.lon);
    const hex = str(a.hex);
    if (lat === null || lon === null || !hex) continue;
    const ground = a.alt_baro === "ground";
    const emergency = str(a.emergency);
    aircraft.push({
      hex: hex.toLowerCase(),
      callsign: str(a.flight),
      registration: str(a.r),
      type: str(a.t),
      description: str(a.desc),
      lat,
      lon,
      on_ground: ground,
      altitude_ft: ground ? null : (num(a.alt_baro) ?? num(a.alt_geom)),
      speed_kt: num(a.gs),
      heading_deg: num(a.track) ?? num(a.true_heading) ?? num(a.mag_heading),
      vertical_rate_fpm: ground ? null : (num(a.baro_rate) ?? num(a.geom_rate)),
      squawk: str(a.squawk),
      emergency: emergency && emergency !== "none" ? emergency : null,
      position_age_s: num(a.seen_pos),
    });
  }
  const now = num(b.now);
  // "now" is milliseconds on adsb.lol and airplanes.live, seconds on plain readsb.
  const at = now === null ? null : new Date(now > 1e11 ? now : now * 1000).toISOString();
  return { aircraft, at };
}

// Positions move every second; a few seconds of cache only joins callers asking at once.
const TTL = 10;

/** Aircraft within radius nautical miles of a point (the API's own limit is 250). */
export function around(ctx: Ctx, lat: number, lon: number, radiusNm: number): Promise<Fetched<Sighting>> {
  const r = (n: number) => Math.round(n * 1e3) / 1e3;
  return ctx.http.get("ADSB", `/v2/point/${r(lat)}/${r(lon)}/${Math.ceil(radiusNm)}`, { ttl: TTL, keep: 0, parse: parseAircraft });
}

export function byCallsign(ctx: Ctx, callsign: string): Promise<Fetched<Sighting>> {
  return ctx.http.get("ADSB", `/v2/callsign/${encodeURIComponent(callsign)}`, { ttl: TTL, keep: 0, parse: parseAircraft });
}

export function byRegistration(ctx: Ctx, registration: string): Promise<Fetched<Sighting>> {
  return ctx.http.get("ADSB", `/v2/reg/${encodeURIComponent(registration)}`, { ttl: TTL, keep: 0, parse: parseAircraft });
}
