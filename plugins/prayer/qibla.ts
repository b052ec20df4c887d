// The direction of the Kaaba along the great circle, measured from true north.
import { Coordinates, Qibla } from "adhan";

const KAABA = { lat: 21.4225241, lon: 39.8261818 };
const POINTS = ["N", "NNE", "NE", "ENE", "E", "ESE", "SE", "SSE", "S", "SSW", "SW", "WSW", "W", "WNW", "NW", "NNW"];

function distanceKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = (d: number) => (d * Math.PI) / 180;
  const a = Math.sin(r(lat2 - lat1) / 2) ** 2 + Math.cos(r(lat1)) * Math.cos(r(lat2)) * Math.sin(r(lon2 - lon1) / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.min(1, Math.sqrt(a)));
}

export function qibla(lat: number, lon: number) {
  const bearing = Qibla(new Coordinates(lat, lon));
  const km = distanceKm(lat, lon, KAABA.lat, KAABA.lon);
  return {
    location: { lat, lon },
    bearing: Math.round(bearing * 100) / 100,
    compass: POINTS[Math.round(bearing / 22.5) % 16],
    reference: "degrees clockwise from true north; a magnetic compass differs by the local declination",
    distance_km: Math.round(km),
    kaaba: KAABA,
    // At the Kaaba itself every direction faces it.
    at_kaaba: km < 0.05,
  };
}
