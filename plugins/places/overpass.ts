// Points of interest from OpenStreetMap through the Overpass API: a query in
// Overpass QL around a point, answered as Overpass JSON (`out center tags`, so
// ways and relations come with a centre point).
import { upstream, type Ctx, type Fetched } from "hearth";
import { metres } from "./where.ts";

export interface Poi {
  name: string;
  /** The OSM key that makes it a point of interest and its value: amenity=cafe is { category: "amenity", kind: "cafe" }. */
  category: string;
  kind: string;
  lat: number;
  lon: number;
  distance_m: number;
  address?: string;
  cuisine?: string;
  opening_hours?: string;
  website?: string;
  phone?: string;
  osm: { type: string; id: number };
}

// The keys that say what a place is, most telling first.
const KEYS = ["amenity", "shop", "tourism", "leisure", "healthcare", "historic", "office", "craft", "sport", "public_transport", "railway"];
const DAY = 86_400;
// Overpass cannot sort by distance, so it is asked for at most this many and
// the nearest are picked here; a full answer means there were more.
const CAP = 300;

// Everyday words for things OSM tags under another name.
const SYNONYMS: Record<string, [string, string][]> = {
  coffee: [["amenity", "cafe"]],
  petrol: [["amenity", "fuel"]],
  gas: [["amenity", "fuel"]],
  chemist: [["amenity", "pharmacy"], ["shop", "chemist"]],
  drugstore: [["amenity", "pharmacy"], ["shop", "chemist"]],
  cashpoint: [["amenity", "atm"]],
  grocery: [["shop", "supermarket"], ["shop", "convenience"], ["shop", "greengrocer"]],
  groceries: [["shop", "supermarket"], ["shop", "convenience"], ["shop", "greengrocer"]],
  toilet: [["amenity", "toilets"]],
  loo: [["amenity", "toilets"]],
  doctor: [["amenity", "doctors"], ["healthcare", "doctor"]],
  gp: [["amenity", "doctors"]],
  dentist: [["amenity", "dentist"]],
  mosque: [["amenity", "place_of_worship"]],
  church: [["amenity", "place_of_worship"]],
  temple: [["amenity", "place_of_worship"]],
  synagogue: [["amenity", "place_of_worship"]],
  gym: [["leisure", "fitness_centre"]],
  playground: [["leisure", "playground"]],
  museum: [["tourism", "museum"]],
  hotel: [["tourism", "hotel"]],
  parking: [["amenity", "parking"]],
  charging: [["amenity", "charging_station"]],
  bus: [["highway", "bus_stop"]],
  station: [["railway", "station"], ["public_transport", "station"]],
};

const STOP = new Set("a an and the of in on at near for to with by me my some any find where is are best good open".split(" "));

function words(text: string): string[] {
  const out: string[] = [];
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (STOP.has(w) || (w.length < 3 && !/\d/.test(w))) continue;
    out.push(w);
  }
  return [...new Set(out)].slice(0, 6);
}

/** A word as an Overpass QL regex inside double quotes, matching its plural too. */
function wordRegex(w: string): string {
  const stem = w.length > 3 && w.endsWith("s") && !w.endsWith("ss") ? w.slice(0, -1) : w;
  return stem.replace(/[.*+?^${}()|[\]\\]/g, "\\\\$&").replace(/"/g, '\\"') + "(e?s)?";
}

export function buildQuery(lat: number, lon: number, radius: number, text: string | undefined): string {
  const around = `(around:${Math.round(radius)},${lat.toFixed(6)},${lon.toFixed(6)})`;
  const keys = `^(${KEYS.join("|")}|cuisine)$`;
  const parts: string[] = [];
  const ws = text ? words(text) : [];
  if (ws.length === 0) {
    parts.push(`nwr${around}["name"][~"^(${KEYS.join("|")})$"~"."];`);
  } else {
    for (const w of ws) {
      const re = wordRegex(w);
      parts.push(`nwr${around}["name"~"${re}",i];`);
      parts.push(`nwr${around}[~"${keys}"~"^${re}$",i];`);
      for (const [k, v] of SYNONYMS[w] ?? []) parts.push(`nwr${around}["${k}"="${v}"];`);
    }
  }
  return `[out:json][timeout:25];\n(\n  ${parts.join("\n  ")}\n);\nout center tags ${CAP};`;
}

function address(t: Record<string, string>): string | undefined {
  const street = [t["addr:housenumber"], t["addr:street"]].filter(Boolean).join(" ");
  const line = [street, t["addr:city"] ?? t["addr:place"], t["addr:postcode"]].filter(Boolean).join(", ");
  return line || undefined;
}

export interface OverpassAnswer {
  elements: { type: string; id: number; lat: number; lon: number; tags: Record<string, string> }[];
  as_of?: string;
}

/** Overpass JSON; a query the server gave up on comes back 200 with a "remark" and no elements. */
export function parseOverpass(body: any): OverpassAnswer {
  if (!body || typeof body !== "object" || !Array.isArray(body.elements)) throw new Error("Overpass answer without elements");
  const remark = typeof body.remark === "string" ? body.remark : "";
  if (/runtime error/i.test(remark)) {
    if (/timed out|timeout/i.test(remark)) throw upstream("upstream_timeout", "the Overpass API ran out of time on this search; try a smaller radius");
    throw upstream("upstream_unavailable", `the Overpass API could not run this search (${remark.slice(0, 160)})`);
  }
  const elements = [];
  for (const e of body.elements) {
    const lat = e.lat ?? e.center?.lat;
    const lon = e.lon ?? e.center?.lon;
    if (typeof lat !== "number" || typeof lon !== "number") continue;
    elements.push({ type: String(e.type), id: Number(e.id), lat, lon, tags: (e.tags ?? {}) as Record<string, string> });
  }
  return { elements, as_of: body.osm3s?.timestamp_osm_base };
}

function toPoi(e: OverpassAnswer["elements"][number], from: { lat: number; lon: number }): Poi | null {
  const t = e.tags;
  const key = KEYS.find((k) => t[k]) ?? (t.highway === "bus_stop" ? "highway" : undefined);
  const name = t.name ?? t.brand ?? t.operator;
  if (!key && !name) return null;
  const poi: Poi = {
    name: name ?? "",
    category: key ?? "",
    kind: key ? t[key] : "",
    lat: e.lat,
    lon: e.lon,
    distance_m: Math.round(metres(from, e)),
    osm: { type: e.type, id: e.id },
  };
  const addr = address(t);
  if (addr) poi.address = addr;
  if (t.cuisine) poi.cuisine = t.cuisine;
  if (t.opening_hours) poi.opening_hours = t.opening_hours;
  const site = t.website ?? t["contact:website"];
  if (site) poi.website = site;
  const phone = t.phone ?? t["contact:phone"];
  if (phone) poi.phone = phone;
  return poi;
}

/** How many of the asked-for words a place answers to, in its name or in what it is. */
function score(p: Poi, tags: Record<string, string>, ws: string[]): number {
  const hay = [p.name, ...Object.entries(tags).filter(([k]) => KEYS.includes(k) || k === "cuisine").map(([, v]) => v.replace(/_/g, " "))].join(" ").toLowerCase();
  let n = 0;
  for (const w of ws) {
    const stem = w.length > 3 && w.endsWith("s") && !w.endsWith("ss") ? w.slice(0, -1) : w;
    if (hay.includes(stem) || (SYNONYMS[w] ?? []).some(([k, v]) => tags[k] === v)) n++;
  }
  return n;
}

function request(lat: number, lon: number, radius: number, text: string | undefined) {
  return {
    method: "POST" as const,
    body: `data=${encodeURIComponent(buildQuery(lat, lon, radius, text))}`,
  };
}

export function peekAround(ctx: Ctx, lat: number, lon: number, radius: number, text: string | undefined): boolean | Promise<boolean> {
  return ctx.http.peek("OVERPASS", "/api/interpreter", request(lat, lon, radius, text));
}

export async function around(
  ctx: Ctx,
  at: { lat: number; lon: number },
  radius: number,
  text: string | undefined,
  limit: number,
): Promise<{ places: Poi[]; fetched: Fetched<OverpassAnswer>; note?: string }> {
  const f = await ctx.http.get("OVERPASS", "/api/interpreter", {
    ...request(at.lat, at.lon, radius, text),
    contentType: "application/x-www-form-urlencoded",
    ttl: DAY,
    parse: parseOverpass,
  });
  const ws = text ? words(text) : [];
  const scored: { p: Poi; s: number }[] = [];
  const seen = new Set<string>();
  for (const e of f.data.elements) {
    const p = toPoi(e, at);
    if (!p || p.distance_m > radius * 1.05) continue;
    // Unasked, a nameless bench or bin is noise; asked for ("toilets", "atm"), it is the answer.
    if (ws.length === 0 && !p.name) continue;
    const id = `${e.type}/${e.id}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const s = ws.length ? score(p, e.tags, ws) : 1;
    if (s > 0) scored.push({ p, s });
  }
  scored.sort((a, b) => b.s - a.s || a.p.distance_m - b.p.distance_m);
  const note =
    f.data.elements.length >= CAP
      ? `more than ${CAP} places lie within ${radius} m, and these are the nearest of the first ${CAP} OpenStreetMap gave; a smaller radius or a query finds the nearest for certain`
      : undefined;
  return { places: scored.slice(0, limit).map((x) => x.p), fetched: f, ...(note ? { note } : {}) };
}
