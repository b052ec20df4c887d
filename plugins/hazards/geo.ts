// A point, a radius, and how far things are from it.
import { Type as T } from "@sinclair/typebox";
import { invalid } from "hearth";

export const Lat = T.Optional(T.Number({ minimum: -90, maximum: 90, description: "Latitude of a point to search around (with lon)." }));
export const Lon = T.Optional(T.Number({ minimum: -180, maximum: 180, description: "Longitude of a point to search around (with lat)." }));
export const WithinKm = (dflt: number) =>
  T.Optional(T.Number({ exclusiveMinimum: 0, maximum: 20_040, description: `Radius around lat/lon in kilometres (default ${dflt} when a point is given).` }));

export interface Near {
  lat: number;
  lon: number;
  within_km: number;
}

/** A point needs both halves; a radius needs a point. */
export function nearFrom(a: { lat?: number; lon?: number; within_km?: number }, dflt: number): Near | null {
  if (a.lat === undefined && a.lon === undefined) {
    if (a.within_km !== undefined) throw invalid("within_km", "within_km needs a point: give lat and lon too");
    return null;
  }
  if (a.lat === undefined) throw invalid("lat", "lat is required with lon");
  if (a.lon === undefined) throw invalid("lon", "lon is required with lat");
  return { lat: a.lat, lon: a.lon, within_km: a.within_km ?? dflt };
}

const R = 6371.0088;
const rad = (d: number) => (d * Math.PI) / 180;

/** Great-circle distance in kilometres. */
export function distanceKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const dLat = rad(lat2 - lat1);
  const dLon = rad(lon2 - lon1);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(lat1)) * Math.cos(rad(lat2)) * Math.sin(dLon / 2) ** 2;
  return 2 * R * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** "just now", "12 minutes ago", "3 hours ago", "2 days ago". */
export function ago(thenMs: number, nowMs: number): string {
  const s = Math.max(0, Math.round((nowMs - thenMs) / 1000));
  if (s < 60) return "just now";
  const unit = (n: number, w: string) => `${n} ${w}${n === 1 ? "" : "s"} ago`;
  if (s < 3600) return unit(Math.floor(s / 60), "minute");
  if (s < 86_400) return unit(Math.floor(s / 3600), "hour");
  return unit(Math.floor(s / 86_400), "day");
}
