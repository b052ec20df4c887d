// USGS real-time summary feeds: GeoJSON, one file per magnitude floor and
// period (https://earthquake.usgs.gov/earthquakes/feed/v1.0/geojson.php).

export type Period = "hour" | "day" | "week" | "month";

/** The coarsest published feed that still holds every quake of at least `min`. */
export function feedFor(min: number, period: Period): string {
  const floor = min >= 4.5 ? "4.5" : min >= 2.5 ? "2.5" : min >= 1 ? "1.0" : "all";
  return `/earthquakes/feed/v1.0/summary/${floor}_${period}.geojson`;
}

export interface Quake {
  id: string;
  magnitude: number;
  place: string;
  time: number;
  lat: number;
  lon: number;
  depth_km: number | null;
  tsunami: boolean;
  alert: string | null;
  felt: number | null;
  url: string;
}

export function quakes(body: any): Quake[] {
  if (body?.type !== "FeatureCollection" || !Array.isArray(body.features)) throw new Error("not a USGS GeoJSON feed");
  const out: Quake[] = [];
  for (const f of body.features) {
    const p = f?.properties;
    const c = f?.geometry?.coordinates;
    if (!p || !Array.isArray(c) || typeof c[0] !== "number" || typeof c[1] !== "number") continue;
    if (typeof p.mag !== "number" || typeof p.time !== "number") continue;
    out.push({
      id: String(f.id),
      magnitude: p.mag,
      place: typeof p.place === "string" ? p.place : "unknown place",
      time: p.time,
      lat: c[1],
      lon: c[0],
      depth_km: typeof c[2] === "number" ? c[2] : null,
      // USGS sets tsunami=1 for large oceanic events: a link to the warning centres, not a confirmed wave.
      tsunami: p.tsunami === 1,
      alert: typeof p.alert === "string" ? p.alert : null,
      felt: typeof p.felt === "number" ? p.felt : null,
      url: typeof p.url === "string" ? p.url : "",
    });
  }
  return out;
}
