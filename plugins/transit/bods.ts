// Live bus positions in England from the Bus Open Data Service: SIRI-VM XML
// for a bounding box, with a key (BODS_API_KEY).
import type { XMLParser } from "fast-xml-parser";
import { upstream, type Ctx, type Fetched, defineProvider } from "hearth";

defineProvider({
  name: "BODS",
  label: "Bus Open Data Service",
  url: "https://data.bus-data.dft.gov.uk",
  attribution: "Bus Open Data Service, Department for Transport, Open Government Licence",
  concurrency: 2,
  rate: { count: 5, perMs: 1000 },
  timeoutMs: 20_000,
});

export interface Bus {
  line: string | null;
  operator: string | null;
  direction: string | null;
  origin: string | null;
  destination: string | null;
  lat: number;
  lon: number;
  bearing: number | null;
  vehicle: string | null;
  recorded_at: string | null;
}

// Made on first use, so the XML parser is loaded only by an instance that reads bus positions.
let made: XMLParser | undefined;
const xmlParser = () =>
  (made ??= new (require("fast-xml-parser") as typeof import("fast-xml-parser")).XMLParser({
    ignoreAttributes: true,
    removeNSPrefix: true,
    parseTagValue: false,
    isArray: (name) => name === "VehicleActivity",
  }));

const str = (v: unknown) => (typeof v === "string" && v.trim() !== "" ? v.trim() : typeof v === "number" ? String(v) : null);
// Stop names in the feed use underscores for spaces ("Leeds_Bus_Station").
const name = (v: unknown) => str(v)?.replace(/_/g, " ") ?? null;

export function parseSiriVm(xml: string): { buses: Bus[]; at: string | null } {
  const doc = xmlParser().parse(xml) as { Siri?: { ServiceDelivery?: { ResponseTimestamp?: string; VehicleMonitoringDelivery?: { VehicleActivity?: unknown[] } } } };
  const delivery = doc?.Siri?.ServiceDelivery;
  if (!delivery) throw new Error("not a SIRI service delivery");
  const buses: Bus[] = [];
  for (const a of delivery.VehicleMonitoringDelivery?.VehicleActivity ?? []) {
    const act = a as Record<string, any>;
    const j = act?.MonitoredVehicleJourney as Record<string, any> | undefined;
    if (!j) continue;
    const lat = Number(j.VehicleLocation?.Latitude);
    const lon = Number(j.VehicleLocation?.Longitude);
    if (!Number.isFinite(lat) || !Number.isFinite(lon)) continue;
    const bearing = j.Bearing === undefined || j.Bearing === "" ? null : Number(j.Bearing);
    buses.push({
      line: str(j.PublishedLineName) ?? str(j.LineRef),
      operator: str(j.OperatorRef),
      direction: str(j.DirectionRef),
      origin: name(j.OriginName),
      destination: name(j.DestinationName),
      lat,
      lon,
      bearing: bearing !== null && Number.isFinite(bearing) ? bearing : null,
      vehicle: str(j.VehicleRef),
      recorded_at: str(act.RecordedAtTime) ? new Date(act.RecordedAtTime).toISOString() : null,
    });
  }
  return { buses, at: str(delivery.ResponseTimestamp) ? new Date(delivery.ResponseTimestamp!).toISOString() : null };
}

export function busesIn(ctx: Ctx, box: { minLon: number; minLat: number; maxLon: number; maxLat: number }): Promise<Fetched<{ buses: Bus[]; at: string | null }>> {
  const r = (n: number) => Math.round(n * 1e3) / 1e3;
  return ctx.http.get("BODS", "/api/v1/datafeed/", {
    query: { boundingBox: [r(box.minLon), r(box.minLat), r(box.maxLon), r(box.maxLat)].join(","), api_key: ctx.config.BODS_API_KEY },
    as: "text",
    ttl: 15,
    keep: 60,
    accept: [401, 403],
    parse: (xml: string, status) => {
      if (status === 401 || status === 403) throw upstream("upstream_failed", `the Bus Open Data Service refused BODS_API_KEY (HTTP ${status}): check the key`);
      return parseSiriVm(xml);
    },
  });
}
