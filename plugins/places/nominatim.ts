// Nominatim (OpenStreetMap's geocoder) in its jsonv2 format: search turns a
// name or address into places, reverse names the place at a point. Its usage
// policy allows one request a second, which the upstream layer's rate cap for
// NOMINATIM enforces; answers are cached a week because places rarely move.
import { invalid, type Ctx, type Fetched } from "hearth";

export interface Place {
  name: string;
  display_name: string;
  lat: number;
  lon: number;
  /** OSM's key and value: "amenity"/"cafe", "place"/"city", "boundary"/"administrative". */
  category: string;
  type: string;
  address: Record<string, string>;
  /** south, north, west, east */
  bbox: [number, number, number, number] | null;
  osm: { type: string; id: number } | null;
}

const WEEK = 7 * 86_400;

function num(v: unknown, what: string): number {
  const n = typeof v === "number" ? v : typeof v === "string" ? Number(v) : NaN;
  if (!Number.isFinite(n)) throw new Error(`Nominatim place without a numeric ${what}`);
  return n;
}

/** One jsonv2 place; throws on a shape that is not one (the layer turns that into a 502). */
export function toPlace(p: any): Place {
  if (!p || typeof p !== "object") throw new Error("Nominatim place is not an object");
  const bb = Array.isArray(p.boundingbox) && p.boundingbox.length === 4 ? (p.boundingbox.map(Number) as [number, number, number, number]) : null;
  const address: Record<string, string> = {};
  if (p.address && typeof p.address === "object") for (const [k, v] of Object.entries(p.address)) if (typeof v === "string") address[k] = v;
  const display = typeof p.display_name === "string" ? p.display_name : "";
  return {
    name: typeof p.name === "string" && p.name ? p.name : display.split(",")[0]?.trim() ?? "",
    display_name: display,
    lat: num(p.lat, "lat"),
    lon: num(p.lon, "lon"),
    // jsonv2 says "category" where the older json format said "class".
    category: String(p.category ?? p.class ?? ""),
    type: String(p.type ?? ""),
    address,
    bbox: bb && bb.every(Number.isFinite) ? bb : null,
    osm: p.osm_type && p.osm_id !== undefined ? { type: String(p.osm_type), id: Number(p.osm_id) } : null,
  };
}

export function parseSearch(body: unknown): Place[] {
  if (!Array.isArray(body)) throw new Error("Nominatim search did not answer a list");
  return body.map(toPlace);
}

/** Reverse answers one place, or {"error": "Unable to geocode"} where there is nothing to name. */
export function parseReverse(body: any): Place | null {
  if (body && typeof body === "object" && "error" in body && !("lat" in body)) return null;
  return toPlace(body);
}

const searchRequest = (text: string, limit: number) => ({ query: { q: text.trim(), format: "jsonv2", addressdetails: 1, limit } });
// About a metre: finer than any address, coarse enough that a phone's jitter shares a cached answer.
const reverseRequest = (lat: number, lon: number) => ({
  query: { lat: Math.round(lat * 1e5) / 1e5, lon: Math.round(lon * 1e5) / 1e5, format: "jsonv2", addressdetails: 1, zoom: 18 },
});

export function searchPlaces(ctx: Ctx, text: string, limit = 5): Promise<Fetched<Place[]>> {
  return ctx.http.get("NOMINATIM", "/search", { ...searchRequest(text, limit), ttl: WEEK, parse: parseSearch });
}

export function reverse(ctx: Ctx, lat: number, lon: number): Promise<Fetched<Place | null>> {
  return ctx.http.get("NOMINATIM", "/reverse", { ...reverseRequest(lat, lon), ttl: WEEK, parse: parseReverse });
}

/**
 * The single best match for a place name, for methods that take a place as an
 * argument; a name nothing matches is that argument's fault, so it is a 400 naming it.
 */
export async function resolve(ctx: Ctx, field: string, text: string): Promise<{ place: Place; fetched: Fetched<Place[]> }> {
  const f = await searchPlaces(ctx, text, 1);
  const place = f.data[0];
  if (!place) throw invalid(field, `no place found for ${field} "${text}"; try a fuller name or give coordinates`);
  return { place, fetched: f };
}
