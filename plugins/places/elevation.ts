// Height above sea level from Open-Meteo's elevation API, which samples the
// Copernicus 90-metre digital elevation model. The ground does not move, so a
// sampled point is kept for good.
import type { Ctx } from "hearth";

const FEET_PER_METRE = 1 / 0.3048;

export function parseElevation(body: any): number {
  const e = body?.elevation;
  if (!Array.isArray(e) || typeof e[0] !== "number" || !Number.isFinite(e[0])) throw new Error("Open-Meteo elevation answer without a number");
  return e[0];
}

// Four decimals is about 10 m, well inside one 90 m cell, so nearby asks share a copy.
const request = (lat: number, lon: number) => ({ query: { latitude: Math.round(lat * 1e4) / 1e4, longitude: Math.round(lon * 1e4) / 1e4 } });

export async function elevationAt(ctx: Ctx, lat: number, lon: number) {
  const f = await ctx.http.get("OPEN_METEO", "/v1/elevation", { ...request(lat, lon), ttl: Infinity, parse: parseElevation });
  return {
    metres: Math.round(f.data * 10) / 10,
    feet: Math.round(f.data * FEET_PER_METRE),
    model: "Copernicus DEM GLO-90 (90 m cells): a summit reads slightly under its surveyed height",
    about: f.about,
  };
}
