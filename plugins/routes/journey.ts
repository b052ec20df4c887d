// One journey between two points by one mode: OSRM for free-flow road times,
// the configured provider when the answer depends on the clock (timetables,
// traffic at a given time).
import { invalid, type Ctx, type About } from "hearth";
import { KEY, keyOf, providerRoute, type ProviderStep } from "./google.ts";
import { roadRoute, type RoadMode, type Step } from "./osrm.ts";

export type Mode = RoadMode | "transit";
interface Point {
  lat: number;
  lon: number;
}

export interface Journey {
  distance_m: number;
  duration_s: number;
  depart_at: string;
  arrive_at: string;
  /** Whether live or predicted traffic is in duration_s. */
  traffic: boolean;
  free_flow_s?: number;
  /** True when arrive_by cannot be met even leaving now. */
  late?: true;
  steps: (Step | ProviderStep)[];
  summary?: string;
  sources: About[];
}

export function parseTime(field: "depart_at" | "arrive_by", v: string | undefined): Date | undefined {
  if (v === undefined) return undefined;
  const t = Date.parse(v);
  if (!Number.isFinite(t)) throw invalid(field, `${field} is not a real time (got "${v}")`);
  return new Date(t);
}

export async function journey(ctx: Ctx, mode: Mode, from: Point, to: Point, opts: { departAt?: Date; arriveBy?: Date; steps: boolean }): Promise<Journey> {
  const now = ctx.clock.now();
  const timed = opts.departAt !== undefined || opts.arriveBy !== undefined;

  if (mode === "transit") {
    const key = keyOf(ctx, "transit journeys");
    const f = await providerRoute(ctx, key, { mode, from, to, departAt: opts.arriveBy ? undefined : (opts.departAt ?? now), arriveBy: opts.arriveBy });
    const r = f.data;
    const arrive = r.arrives ? new Date(r.arrives) : new Date((opts.departAt ?? now).getTime() + r.duration_s * 1000);
    const depart = opts.arriveBy ? new Date(arrive.getTime() - r.duration_s * 1000) : (opts.departAt ?? now);
    return { distance_m: r.distance_m, duration_s: r.duration_s, depart_at: depart.toISOString(), arrive_at: arrive.toISOString(), traffic: false, steps: r.steps, sources: [f.about] };
  }

  // With a traffic provider configured every drive is timed in traffic, leaving now unless told otherwise.
  if (mode === "drive" && (timed || ctx.config[KEY])) {
    const key = keyOf(ctx, "driving times for a given departure or arrival");
    if (!opts.arriveBy) {
      const departAt = opts.departAt ?? now;
      const f = await providerRoute(ctx, key, { mode, from, to, departAt });
      const r = f.data;
      return {
        distance_m: r.distance_m,
        duration_s: r.duration_s,
        depart_at: departAt.toISOString(),
        arrive_at: new Date(departAt.getTime() + r.duration_s * 1000).toISOString(),
        traffic: true,
        ...(r.free_flow_s !== undefined ? { free_flow_s: r.free_flow_s } : {}),
        steps: r.steps,
        sources: [f.about],
      };
    }
    // The provider times a drive only from a departure, so estimate one, then
    // ask again at that departure, when the traffic is the traffic that matters.
    const arriveBy = opts.arriveBy!;
    const guess = await providerRoute(ctx, key, { mode, from, to, departAt: new Date(Math.max(now.getTime(), arriveBy.getTime() - 3600_000)) });
    let leave = new Date(arriveBy.getTime() - guess.data.duration_s * 1000);
    let f = guess;
    if (leave.getTime() > now.getTime()) {
      f = await providerRoute(ctx, key, { mode, from, to, departAt: leave });
      leave = new Date(arriveBy.getTime() - f.data.duration_s * 1000);
    }
    const late = leave.getTime() < now.getTime();
    const depart = late ? now : leave;
    const r = f.data;
    return {
      distance_m: r.distance_m,
      duration_s: r.duration_s,
      depart_at: depart.toISOString(),
      arrive_at: new Date(depart.getTime() + r.duration_s * 1000).toISOString(),
      traffic: true,
      ...(r.free_flow_s !== undefined ? { free_flow_s: r.free_flow_s } : {}),
      ...(late ? { late: true as const } : {}),
      steps: r.steps,
      sources: f === guess ? [f.about] : [guess.about, f.about],
    };
  }

  // Walking and cycling do not wait on traffic, and a drive with no time given is the free-flow time.
  const f = await roadRoute(ctx, mode, from, to, opts.steps);
  const r = f.data;
  let depart = opts.departAt ?? now;
  let late = false;
  if (opts.arriveBy) {
    depart = new Date(opts.arriveBy.getTime() - r.duration_s * 1000);
    if (depart.getTime() < now.getTime()) {
      depart = now;
      late = true;
    }
  }
  return {
    distance_m: r.distance_m,
    duration_s: r.duration_s,
    depart_at: depart.toISOString(),
    arrive_at: new Date(depart.getTime() + r.duration_s * 1000).toISOString(),
    traffic: false,
    ...(late ? { late: true as const } : {}),
    steps: r.steps,
    ...(r.summary ? { summary: r.summary } : {}),
    sources: [f.about],
  };
}

/** "1 h 5 min", "12 min", "40 s". */
export function spoken(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const m = Math.round(seconds / 60);
  if (m < 60) return `${m} min`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}
