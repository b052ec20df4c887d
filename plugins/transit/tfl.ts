// Transport for London's Unified API: live arrivals, line status and stop
// points. Keyless at a modest rate; TFL_APP_KEY raises the limit.
import { notFound, type Ctx, type Fetched, defineProvider } from "hearth";

defineProvider({
  name: "TFL",
  label: "Transport for London Unified API",
  url: "https://api.tfl.gov.uk",
  attribution: "Powered by TfL Open Data",
  concurrency: 4,
  // Anonymous callers get 50 requests a minute.
  rate: { count: 50, perMs: 60_000 },
});

export const STATUS_MODES = ["tube", "dlr", "overground", "elizabeth-line", "tram"] as const;
const ARRIVAL_MODES = ["bus", "tube", "dlr", "overground", "elizabeth-line", "tram"];

const key = (ctx: Ctx) => (ctx.config.TFL_APP_KEY ? { app_key: ctx.config.TFL_APP_KEY } : {});

/** Roughly Greater London: where TfL's live data is the answer. */
export const inLondon = (lat: number, lon: number) => lat > 51.28 && lat < 51.7 && lon > -0.52 && lon < 0.34;

interface ApiError {
  httpStatusCode?: number;
  message?: string;
}
function refused(body: unknown, status: number): void {
  if (status === 404) throw notFound((body as ApiError)?.message ?? "TfL does not know that stop");
}

export interface Match {
  id: string;
  name: string;
  lat: number | null;
  lon: number | null;
  modes: string[];
}

export function searchStops(ctx: Ctx, query: string): Promise<Fetched<Match[]>> {
  return ctx.http.get("TFL", `/StopPoint/Search/${encodeURIComponent(query)}`, {
    query: { modes: ARRIVAL_MODES, ...key(ctx) },
    ttl: 86_400,
    parse: (b: { matches?: unknown }) => {
      if (!b || !Array.isArray(b.matches)) throw new Error("no matches list");
      return (b.matches as Record<string, unknown>[]).map((m) => ({
        id: String(m.id),
        name: String(m.name ?? m.id),
        lat: typeof m.lat === "number" ? m.lat : null,
        lon: typeof m.lon === "number" ? m.lon : null,
        modes: Array.isArray(m.modes) ? (m.modes as string[]) : [],
      }));
    },
  });
}

export interface Arrival {
  line: string;
  mode: string;
  destination: string | null;
  towards: string | null;
  platform: string | null;
  stop: string;
  stop_id: string;
  expected: string;
  minutes: number;
  vehicle: string | null;
  current_location: string | null;
}

const text = (v: unknown) => (typeof v === "string" && v.trim() !== "" ? v.trim() : null);
// TfL fills platformName with "null" for some buses, and a stop letter for others.
const platform = (v: unknown) => {
  const t = text(v);
  return t && t !== "null" ? t : null;
};

export function arrivals(ctx: Ctx, stopId: string): Promise<Fetched<Arrival[]>> {
  return ctx.http.get("TFL", `/StopPoint/${encodeURIComponent(stopId)}/Arrivals`, {
    query: key(ctx),
    ttl: 30,
    keep: 120,
    accept: [404],
    parse: (b: unknown, status) => {
      refused(b, status);
      if (!Array.isArray(b)) throw new Error("not a list of predictions");
      return (b as Record<string, unknown>[])
        .filter((p) => typeof p.expectedArrival === "string")
        .map((p) => ({
          line: String(p.lineName ?? p.lineId ?? ""),
          mode: String(p.modeName ?? ""),
          destination: text(p.destinationName),
          towards: text(p.towards),
          platform: platform(p.platformName),
          stop: String(p.stationName ?? ""),
          stop_id: String(p.naptanId ?? stopId),
          expected: new Date(p.expectedArrival as string).toISOString(),
          minutes: Math.max(0, Math.round(Number(p.timeToStation ?? 0) / 60)),
          vehicle: text(p.vehicleId),
          current_location: text(p.currentLocation),
        }))
        .sort((x, y) => x.expected.localeCompare(y.expected));
    },
  });
}

export interface LineState {
  line: string;
  id: string;
  mode: string;
  statuses: { severity: number; status: string; reason: string | null; until: string | null }[];
}

export function lineStatus(ctx: Ctx, modes: readonly string[]): Promise<Fetched<LineState[]>> {
  return ctx.http.get("TFL", `/Line/Mode/${modes.join(",")}/Status`, {
    query: key(ctx),
    ttl: 60,
    keep: 600,
    parse: (b: unknown) => {
      if (!Array.isArray(b)) throw new Error("not a list of lines");
      return (b as Record<string, unknown>[]).map((l) => ({
        line: String(l.name ?? l.id),
        id: String(l.id),
        mode: String(l.modeName ?? ""),
        statuses: (Array.isArray(l.lineStatuses) ? (l.lineStatuses as Record<string, unknown>[]) : []).map((s) => {
          const periods = Array.isArray(s.validityPeriods) ? (s.validityPeriods as { toDate?: string; isNow?: boolean }[]) : [];
          const now = periods.find((p) => p.isNow) ?? periods[0];
          return {
            severity: Number(s.statusSeverity ?? 10),
            status: String(s.statusSeverityDescription ?? ""),
            reason: text(s.reason),
            until: now?.toDate ? new Date(now.toDate).toISOString() : null,
          };
        }),
      }));
    },
  });
}

export interface StopPoint {
  id: string;
  name: string;
  indicator: string | null;
  lat: number;
  lon: number;
  distance_m: number;
  modes: string[];
  lines: string[];
}

export function stopsAround(ctx: Ctx, lat: number, lon: number, radius: number): Promise<Fetched<StopPoint[]>> {
  const r4 = (n: number) => Math.round(n * 1e4) / 1e4;
  return ctx.http.get("TFL", "/StopPoint", {
    query: { lat: r4(lat), lon: r4(lon), stopTypes: "NaptanMetroStation,NaptanRailStation,NaptanPublicBusCoachTram", radius, ...key(ctx) },
    ttl: 86_400,
    parse: (b: { stopPoints?: unknown }) => {
      if (!b || !Array.isArray(b.stopPoints)) throw new Error("no stop points");
      return (b.stopPoints as Record<string, unknown>[]).map((s) => ({
        id: String(s.naptanId ?? s.id),
        name: String(s.commonName ?? s.naptanId),
        indicator: text(s.indicator),
        lat: Number(s.lat),
        lon: Number(s.lon),
        distance_m: Math.round(Number(s.distance ?? 0)),
        modes: Array.isArray(s.modes) ? (s.modes as string[]) : [],
        lines: Array.isArray(s.lines) ? (s.lines as { name?: string }[]).map((l) => String(l.name ?? "")).filter(Boolean) : [],
      }));
    },
  });
}
