// Feeds that could be carried: the Mobility Database's catalogue of
// published GTFS timetables (a CSV, keyless), by country.
import { type Ctx, type Fetched, defineProvider } from "hearth";
import { csvRecords } from "./csv.ts";

defineProvider({
  name: "MOBILITY_DATABASE",
  label: "Mobility Database catalogue",
  url: "https://files.mobilitydatabase.org",
  attribution: "Mobility Database by MobilityData, CC0",
  concurrency: 1,
  rate: { count: 1, perMs: 1000 },
  timeoutMs: 60_000,
});

export interface Listed {
  id: string;
  country: string;
  provider: string;
  name: string | null;
  place: string | null;
  url: string;
  /** Every address the catalogue gives for the archive (its own mirror and the publisher's). */
  urls: string[];
  license: string | null;
  status: string | null;
}

export function parseCatalogue(text: string): Listed[] {
  const out: Listed[] = [];
  for (const r of csvRecords(text)) {
    if (r.data_type !== "gtfs") continue;
    // Feeds behind a key or a sign-up cannot be imported with a URL alone.
    if (r["urls.authentication_type"] && r["urls.authentication_type"] !== "0") continue;
    const url = r["urls.latest"] || r["urls.direct_download"];
    if (!url) continue;
    const place = [r["location.municipality"], r["location.subdivision_name"]].filter(Boolean).join(", ");
    out.push({
      id: r.id || r.mdb_source_id,
      country: (r["location.country_code"] || "").toUpperCase(),
      provider: r.provider,
      name: r.name || null,
      place: place || null,
      url,
      urls: [r["urls.latest"], r["urls.direct_download"]].filter(Boolean),
      license: r["urls.license"] || null,
      status: r.status || null,
    });
  }
  if (!out.length && !text.includes("data_type")) throw new Error("not the feed catalogue");
  return out;
}

export function catalogue(ctx: Ctx): Promise<Fetched<Listed[]>> {
  return ctx.http.get("MOBILITY_DATABASE", "/feeds_v2.csv", { as: "text", ttl: 86_400, parse: parseCatalogue });
}
