// Timetables and live traffic, which no keyless provider offers: Google's
// Routes API (computeRoutes), reached only when the instance has a key.
import { invalid, notConfigured, notFound, type Ctx, defineProvider, type Fetched } from "hearth";

defineProvider({ name: "GOOGLE_ROUTES", label: "Google Routes", url: "https://routes.googleapis.com", attribution: "Routes by Google", concurrency: 4 });

export const KEY = "GOOGLE_ROUTES_KEY";

export function keyOf(ctx: Ctx, why: string): string {
  const key = ctx.config[KEY];
  if (!key) throw notConfigured(`${why} need a routing provider with timetables and live traffic: set ${KEY} (a Google Maps Platform key with the Routes API enabled)`);
  return key;
}

export interface ProviderStep {
  instruction: string;
  mode: string;
  distance_m: number;
  duration_s: number;
  transit?: {
    line: string;
    vehicle?: string;
    headsign?: string;
    from_stop?: string;
    to_stop?: string;
    departs?: string;
    arrives?: string;
    stops?: number;
  };
}

export interface ProviderRoute {
  distance_m: number;
  duration_s: number;
  /** The same journey with no traffic; absent for timetabled journeys. */
  free_flow_s?: number;
  departs?: string;
  arrives?: string;
  steps: ProviderStep[];
}

const seconds = (d: unknown): number | undefined => {
  if (typeof d !== "string") return undefined;
  const m = /^(\d+(?:\.\d+)?)s$/.exec(d);
  return m ? Math.round(Number(m[1])) : undefined;
};

export function parseRoutes(body: any): ProviderRoute {
  if (!body || typeof body !== "object") throw new Error("Routes answer is not an object");
  // An empty object is Google's way of saying it found no route.
  const r = Array.isArray(body.routes) ? body.routes[0] : undefined;
  if (!r) throw notFound("there is no route between these places by this mode at that time");
  const duration = seconds(r.duration);
  if (duration === undefined) throw new Error("Routes answer without a duration");
  const steps: ProviderStep[] = [];
  let departs: string | undefined;
  let arrives: string | undefined;
  for (const leg of r.legs ?? [])
    for (const s of leg.steps ?? []) {
      const step: ProviderStep = {
        instruction: s.navigationInstruction?.instructions ?? "",
        mode: String(s.travelMode ?? "").toLowerCase(),
        distance_m: Math.round(s.distanceMeters ?? 0),
        duration_s: seconds(s.staticDuration) ?? 0,
      };
      const t = s.transitDetails;
      if (t) {
        const line = t.transitLine ?? {};
        step.transit = {
          line: line.nameShort ?? line.name ?? "",
          ...(line.vehicle?.type ? { vehicle: String(line.vehicle.type).toLowerCase() } : {}),
          ...(t.headsign ? { headsign: t.headsign } : {}),
          ...(t.stopDetails?.departureStop?.name ? { from_stop: t.stopDetails.departureStop.name } : {}),
          ...(t.stopDetails?.arrivalStop?.name ? { to_stop: t.stopDetails.arrivalStop.name } : {}),
          ...(t.stopDetails?.departureTime ? { departs: t.stopDetails.departureTime } : {}),
          ...(t.stopDetails?.arrivalTime ? { arrives: t.stopDetails.arrivalTime } : {}),
          ...(typeof t.stopCount === "number" ? { stops: t.stopCount } : {}),
        };
        departs ??= t.stopDetails?.departureTime;
        if (t.stopDetails?.arrivalTime) arrives = t.stopDetails.arrivalTime;
      }
      steps.push(step);
    }
  const free = seconds(r.staticDuration);
  return {
    distance_m: Math.round(r.distanceMeters ?? 0),
    duration_s: duration,
    ...(free !== undefined ? { free_flow_s: free } : {}),
    ...(departs ? { departs } : {}),
    ...(arrives ? { arrives } : {}),
    steps,
  };
}

const FIELDS = [
  "routes.duration",
  "routes.staticDuration",
  "routes.distanceMeters",
  "routes.legs.steps.distanceMeters",
  "routes.legs.steps.staticDuration",
  "routes.legs.steps.travelMode",
  "routes.legs.steps.navigationInstruction",
  "routes.legs.steps.transitDetails",
].join(",");

export interface Ask {
  mode: "drive" | "transit";
  from: { lat: number; lon: number };
  to: { lat: number; lon: number };
  departAt?: Date;
  arriveBy?: Date;
}

export function providerRoute(ctx: Ctx, key: string, ask: Ask): Promise<Fetched<ProviderRoute>> {
  const now = ctx.clock.now().getTime();
  // Google refuses a departure in the past; a minute's slack covers a request in flight.
  if (ask.departAt && ask.departAt.getTime() < now - 60_000) throw invalid("depart_at", "depart_at is in the past; traffic and timetables are read for times from now on");
  if (ask.arriveBy && ask.arriveBy.getTime() < now) throw invalid("arrive_by", "arrive_by is in the past");
  const point = (p: { lat: number; lon: number }) => ({ location: { latLng: { latitude: Math.round(p.lat * 1e5) / 1e5, longitude: Math.round(p.lon * 1e5) / 1e5 } } });
  const body: Record<string, unknown> = { origin: point(ask.from), destination: point(ask.to), travelMode: ask.mode === "drive" ? "DRIVE" : "TRANSIT" };
  if (ask.mode === "drive") body.routingPreference = "TRAFFIC_AWARE";
  if (ask.departAt) body.departureTime = ask.departAt.toISOString();
  if (ask.arriveBy) body.arrivalTime = ask.arriveBy.toISOString();
  return ctx.http.get("GOOGLE_ROUTES", "/directions/v2:computeRoutes", {
    method: "POST",
    body: JSON.stringify(body),
    contentType: "application/json",
    headers: { "x-goog-api-key": key, "x-goog-fieldmask": FIELDS },
    // Traffic and delays move quickly; a few minutes is as long as an answer stays true.
    ttl: 300,
    revalidate: 0,
    keep: 900,
    parse: parseRoutes,
  });
}
