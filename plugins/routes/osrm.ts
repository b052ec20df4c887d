// Road routes from OSRM's route service. One OSRM server holds one profile, so
// each mode has its own provider: the project's demo server drives, and the
// FOSSGIS servers walk and cycle. A route is cached a day: roads change
// slowly, and these are free-flow times with no live traffic in them.
import { HearthError, notFound, type Ctx, defineProvider, type Fetched, perSecond } from "hearth";

const osm = "Routes © OpenStreetMap contributors, ODbL";
defineProvider({ name: "OSRM_FOOT", label: "OSRM (FOSSGIS foot routing)", url: "https://routing.openstreetmap.de/routed-foot", attribution: osm, concurrency: 1, rate: perSecond(1) });
defineProvider({ name: "OSRM_BIKE", label: "OSRM (FOSSGIS bicycle routing)", url: "https://routing.openstreetmap.de/routed-bike", attribution: osm, concurrency: 1, rate: perSecond(1) });

export type RoadMode = "drive" | "walk" | "cycle";
const SERVER: Record<RoadMode, { provider: string; profile: string }> = {
  drive: { provider: "OSRM", profile: "car" },
  walk: { provider: "OSRM_FOOT", profile: "foot" },
  cycle: { provider: "OSRM_BIKE", profile: "bike" },
};

export interface Step {
  instruction: string;
  name: string;
  distance_m: number;
  duration_s: number;
  maneuver: { type: string; modifier?: string; exit?: number };
  location: { lat: number; lon: number };
}

export interface RoadRoute {
  distance_m: number;
  duration_s: number;
  summary: string;
  steps: Step[];
  /** How far each end had to move to reach a road, in metres. */
  snapped_m: [number, number];
}

const DAY = 86_400;
const round5 = (n: number) => Math.round(n * 1e5) / 1e5;

function ordinal(n: number): string {
  const s = n % 100 >= 11 && n % 100 <= 13 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" } as Record<number, string>)[n % 10] ?? "th";
  return `${n}${s}`;
}

/** A sentence for one OSRM step, from its maneuver type and modifier (the OSRM docs' vocabulary). */
export function instruction(type: string, modifier: string | undefined, name: string, exit?: number): string {
  const onto = name ? ` onto ${name}` : "";
  const on = name ? ` on ${name}` : "";
  const dir = modifier ?? "straight";
  const turn = dir === "straight" ? "Continue straight" : dir === "uturn" ? "Make a U-turn" : `Turn ${dir}`;
  switch (type) {
    case "depart":
      return `Head off${on}`;
    case "arrive":
      return modifier && modifier !== "straight" ? `Arrive at your destination, on the ${modifier.replace("slight ", "")}` : "Arrive at your destination";
    case "turn":
    case "end of road":
      return `${turn}${onto}`;
    case "new name":
      return `Continue${onto}`;
    case "continue":
      return dir === "straight" ? `Continue${on}` : `${turn} to stay${on}`;
    case "merge":
      return `Merge${onto}`;
    case "on ramp":
      return `Take the ramp${onto}`;
    case "off ramp":
      return `Take the exit${onto}`;
    case "fork":
      return `Keep ${dir.replace("slight ", "")} at the fork${onto}`;
    case "roundabout":
    case "rotary":
      return exit ? `At the roundabout, take the ${ordinal(exit)} exit${onto}` : `Go round the roundabout${onto}`;
    case "roundabout turn":
      return `At the roundabout, ${turn.toLowerCase()}${onto}`;
    case "exit roundabout":
    case "exit rotary":
      return `Leave the roundabout${onto}`;
    default:
      return `${turn}${onto}`;
  }
}

export function parseRoute(body: any, status: number): RoadRoute {
  if (!body || typeof body !== "object" || typeof body.code !== "string") throw new Error("OSRM answer without a code");
  if (body.code === "NoRoute" || body.code === "NoSegment")
    throw notFound(body.code === "NoRoute" ? "there is no route between these places by this mode" : "one of the places is too far from any road or path to route from");
  if (body.code !== "Ok" || status !== 200) throw new HearthError("upstream_failed", `OSRM refused the route request (${body.code}: ${String(body.message ?? "").slice(0, 120)})`, { retry: true });
  const r = body.routes?.[0];
  if (!r || typeof r.distance !== "number" || typeof r.duration !== "number" || !Array.isArray(r.legs)) throw new Error("OSRM route without distance, duration and legs");
  const steps: Step[] = [];
  for (const leg of r.legs)
    for (const s of leg.steps ?? []) {
      const m = s.maneuver ?? {};
      const name = [s.name, s.ref ? `(${s.ref})` : ""].filter(Boolean).join(" ");
      steps.push({
        instruction: instruction(String(m.type ?? ""), m.modifier, name, m.exit),
        name: s.name ?? "",
        distance_m: Math.round(s.distance ?? 0),
        duration_s: Math.round(s.duration ?? 0),
        maneuver: { type: String(m.type ?? ""), ...(m.modifier ? { modifier: m.modifier } : {}), ...(m.exit ? { exit: m.exit } : {}) },
        location: { lat: m.location?.[1], lon: m.location?.[0] },
      });
    }
  const wp = Array.isArray(body.waypoints) ? body.waypoints : [];
  return {
    distance_m: Math.round(r.distance),
    duration_s: Math.round(r.duration),
    summary: r.legs.map((l: any) => l.summary).filter(Boolean).join("; "),
    steps,
    snapped_m: [Math.round(wp[0]?.distance ?? 0), Math.round(wp.at(-1)?.distance ?? 0)],
  };
}

function request(mode: RoadMode, from: { lat: number; lon: number }, to: { lat: number; lon: number }, withSteps: boolean) {
  const { provider, profile } = SERVER[mode];
  const path = `/route/v1/${profile}/${round5(from.lon)},${round5(from.lat)};${round5(to.lon)},${round5(to.lat)}`;
  return { provider, path, query: { overview: "false", alternatives: "false", steps: withSteps ? "true" : "false" } };
}

export function peekRoad(ctx: Ctx, mode: RoadMode, from: { lat: number; lon: number }, to: { lat: number; lon: number }, withSteps: boolean): boolean | Promise<boolean> {
  const r = request(mode, from, to, withSteps);
  return ctx.http.peek(r.provider, r.path, { query: r.query });
}

export function roadRoute(ctx: Ctx, mode: RoadMode, from: { lat: number; lon: number }, to: { lat: number; lon: number }, withSteps: boolean): Promise<Fetched<RoadRoute>> {
  const r = request(mode, from, to, withSteps);
  // OSRM answers "no route" and "no road here" with 400 and a code in the body: those are answers.
  return ctx.http.get(r.provider, r.path, { query: r.query, ttl: DAY, accept: [400], parse: parseRoute });
}
