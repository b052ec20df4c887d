// A location a method takes either as a place name (or "lat,lon" written as
// one) or as separate latitude and longitude arguments, resolved to one
// point. Each plugin that takes one names its own arguments and brings its
// own geocoder for names; the rules for which of them may be given, and the
// refusals that name the argument at fault, are the same everywhere.
import { invalid } from "./errors.ts";

/** The argument names a location is given under: a place name, or a latitude and longitude. */
export interface LocationFields {
  name: string;
  lat: string;
  lon: string;
}

/** A point, with the geocoded place when it was given by name. */
export interface Located<P> {
  lat: number;
  lon: number;
  place?: P;
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

/**
 * The point the arguments name: a name or a latitude and longitude (not both),
 * a name written as "lat,lon" taken as it is, any other name given to
 * `byName` (which answers the place, or throws a 400 naming the field).
 * Nothing given is null, or a 400 when `required`.
 */
export async function locate<P extends { lat: number; lon: number }>(
  args: { lat?: number; lon?: number; name?: string },
  fields: LocationFields,
  required: boolean,
  byName: (field: string, text: string) => Promise<P>,
): Promise<Located<P> | null> {
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
    const place = await byName(fields.name, args.name!);
    return { lat: place.lat, lon: place.lon, place };
  }
  if (required) throw invalid(fields.name, `give ${fields.name} (a place name or address) or ${both}`);
  return null;
}
