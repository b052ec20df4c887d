// Where a journey starts and ends: a place name (or "lat,lon") or `lat` and
// `lon`, resolved to one point. Names go to Nominatim with the very request
// places/geocode makes, so the two share the upstream cache and its
// one-a-second cap; only the answer's point and name are read here.
import { invalid, type Ctx } from "hearth";

export interface Point {
  lat: number;
  lon: number;
  /** The geocoded place when the location was given by name. */
  place?: { display_name: string };
}

/** The argument names a location is given under: a place name, or a latitude and longitude. */
export interface Fields {
  name: string;
  lat: string;
  lon: string;
}

const WEEK = 7 * 86_400;

function num(v: unknown): number {
  const n = typeof v === "number" ? v : typeof v === "string" ? Number(v) : NaN;
  if (!Number.isFinite(n)) throw new Error("Nominatim place without a numeric lat or lon");
  return n;
}

/** Nominatim's jsonv2 search answer, as points; a shape that is not one throws (the upstream layer makes that a 502). */
function parseSearch(body: unknown): { lat: number; lon: number; display_name: string }[] {
  if (!Array.isArray(body)) throw new Error("Nominatim search did not answer a list");
  return body.map((p) => {
    if (!p || typeof p !== "object") throw new Error("Nominatim place is not an object");
    return { lat: num(p.lat), lon: num(p.lon), display_name: typeof p.display_name === "string" ? p.display_name : "" };
  });
}

/** The single best match for a place name; a name nothing matches is that argument's fault, so it is a 400 naming it. */
export async function resolve(ctx: Ctx, field: string, text: string): Promise<{ place: { lat: number; lon: number; display_name: string } }> {
  const f = await ctx.http.get("NOMINATIM", "/search", { query: { q: text.trim(), format: "jsonv2", addressdetails: 1, limit: 1 }, ttl: WEEK, parse: parseSearch });
  const place = f.data[0];
  if (!place) throw invalid(field, `no place found for ${field} "${text}"; try a fuller name or give coordinates`);
  return { place };
}

export async function locate(ctx: Ctx, args: { lat?: number; lon?: number; name?: string }, fields: Fields, required: boolean): Promise<Point | null> {
  const hasName = args.name !== undefined && args.name.trim() !== "";
  const hasPoint = args.lat !== undefined || args.lon !== undefined;
  const both = `${fields.lat} and ${fields.lon}`;
  if (hasName && hasPoint) throw invalid(fields.name, `give ${fields.name} or ${both}, not both`);
  if (hasPoint) {
    if (args.lat === undefined) throw invalid(fields.lat, `${fields.lat} is needed with ${fields.lon}`);
    if (args.lon === undefined) throw invalid(fields.lon, `${fields.lon} is needed with ${fields.lat}`);
    return { lat: args.lat, lon: args.lon };
  }
  if (hasName) {
    const point = coordinates(args.name!);
    if (point === "off-earth") throw invalid(fields.name, `${fields.name} "${args.name}" is not a latitude,longitude on Earth`);
    if (point) return point;
    const { place } = await resolve(ctx, fields.name, args.name!);
    return { lat: place.lat, lon: place.lon, place };
  }
  if (required) throw invalid(fields.name, `give ${fields.name} (a place name or address) or ${both}`);
  return null;
}

const LAT_LON = /^\s*(-?\d{1,3}(?:\.\d+)?)\s*,\s*(-?\d{1,3}(?:\.\d+)?)\s*$/;

/** A place written as "lat,lon" is already a point and needs no geocoder. */
export function coordinates(text: string): { lat: number; lon: number } | "off-earth" | null {
  const m = LAT_LON.exec(text);
  if (!m) return null;
  const lat = Number(m[1]);
  const lon = Number(m[2]);
  return Math.abs(lat) <= 90 && Math.abs(lon) <= 180 ? { lat, lon } : "off-earth";
}
