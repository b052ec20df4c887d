// GDACS's current-events list (GeoJSON). Each event has a centroid Point
// feature; some also come with polygon features for the same event.

const kinds: Record<string, string> = {
  EQ: "earthquake",
  TC: "tropical cyclone",
  FL: "flood",
  VO: "volcano",
  WF: "wildfire",
  DR: "drought",
  TS: "tsunami",
};

export const LEVELS = ["green", "orange", "red"] as const;
export type Level = (typeof LEVELS)[number];

export interface Alert {
  id: string;
  type: string;
  level: Level;
  name: string;
  summary: string;
  country: string;
  from: string | null;
  to: string | null;
  severity: string | null;
  lat: number;
  lon: number;
  url: string;
}

// GDACS times are UTC without an offset.
const utc = (s: unknown) => (typeof s === "string" && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(s) ? `${s}Z` : null);

export function alerts(body: any): Alert[] {
  if (body?.type !== "FeatureCollection" || !Array.isArray(body.features)) throw new Error("not a GDACS event list");
  const seen = new Set<string>();
  const out: Alert[] = [];
  for (const f of body.features) {
    const p = f?.properties;
    if (!p || f?.geometry?.type !== "Point") continue;
    const [lon, lat] = f.geometry.coordinates ?? [];
    if (typeof lat !== "number" || typeof lon !== "number") continue;
    const id = `${p.eventtype}${p.eventid}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const level = String(p.alertlevel ?? "").toLowerCase() as Level;
    if (!LEVELS.includes(level)) continue;
    const sev = p.severitydata?.severitytext;
    out.push({
      id,
      type: kinds[p.eventtype] ?? String(p.eventtype),
      level,
      name: String(p.name ?? p.eventname ?? id),
      summary: String(p.htmldescription ?? p.description ?? "").replace(/<[^>]*>/g, ""),
      country: String(p.country ?? ""),
      from: utc(p.fromdate),
      to: utc(p.todate),
      severity: typeof sev === "string" && sev.trim() && !/^Magnitude 0\s*$/.test(sev) ? sev.trim() : null,
      lat,
      lon,
      url: String(p.url?.report ?? ""),
    });
  }
  return out;
}
