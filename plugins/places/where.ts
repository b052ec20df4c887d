// A location given either as a place name (`near`, `place`) or as `lat` and
// `lon`, resolved to one point.
import { invalid, type Ctx } from "hearth";
import { resolve, type Place } from "./nominatim.ts";

export interface Point {
  lat: number;
  lon: number;
  /** The geocoded place when the location was given by name. */
  place?: Place;
}

/** The argument names a location is given under: a place name, or a latitude and longitude. */
export interface Fields {
  name: string;
  lat: string;
  lon: string;
}

export async function locate(
  ctx: Ctx,
  args: { lat?: number; lon?: number; name?: string },
  fields: Fields,
  required: boolean,
): Promise<Point | null> {
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

/** Great-circle distance in metres. */
export function metres(a: { lat: number; lon: number }, b: { lat: number; lon: number }): number {
  const r = (d: number) => (d * Math.PI) / 180;
  const h = Math.sin(r(b.lat - a.lat) / 2) ** 2 + Math.cos(r(a.lat)) * Math.cos(r(b.lat)) * Math.sin(r(b.lon - a.lon) / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.min(1, Math.sqrt(h)));
}
