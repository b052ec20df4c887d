// What an aircraft near an airport is doing, from its height above the field,
// vertical rate and heading relative to the airport. ADS-B carries no
// clearance or destination, so this is read from the geometry alone.
import type { Aircraft } from "./adsb.ts";
import type { Airport } from "./airports.ts";
import { angleBetween, bearing, distanceNm } from "./geometry.ts";

export const PHASES = ["on_ground", "approaching", "climbing_out", "passing"] as const;
export type Phase = (typeof PHASES)[number];

// Below this height above the field and within the radius, a descent towards
// the airport is an approach and a climb away from it a departure.
const TERMINAL_FT = 10_000;
const CLIMB_FPM = 300;
const POINTING_DEG = 60;
// Slow and low on the field: a taxiing aircraft whose transponder does not set the ground flag.
const TAXI_KT = 50;
const FIELD_NM = 2;
const FIELD_FT = 300;

export function phaseAt(a: Aircraft, airport: Airport): Phase {
  const d = distanceNm(airport, a);
  if (a.on_ground) return "on_ground";
  const above = a.altitude_ft === null ? null : a.altitude_ft - airport.elevation_ft;
  if (d <= FIELD_NM && a.speed_kt !== null && a.speed_kt < TAXI_KT && (above === null || above < FIELD_FT)) return "on_ground";
  if (above === null || above > TERMINAL_FT || a.heading_deg === null) return "passing";
  const rate = a.vertical_rate_fpm ?? 0;
  const towards = d < 0.5 || angleBetween(a.heading_deg, bearing(a, airport)) <= POINTING_DEG;
  const away = d < 0.5 || angleBetween(a.heading_deg, bearing(airport, a)) <= POINTING_DEG;
  if (rate <= -CLIMB_FPM && towards) return "approaching";
  if (rate >= CLIMB_FPM && away) return "climbing_out";
  // Level and low, lined up close in: still on approach (a level segment before the glide path).
  if (Math.abs(rate) < CLIMB_FPM && towards && above < 3000 && d < 10) return "approaching";
  return "passing";
}
