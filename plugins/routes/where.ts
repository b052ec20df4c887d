// Where a journey starts and ends: a place name (or "lat,lon") or `lat` and
// `lon`, resolved to one point. Names go to Nominatim with the very request
// places/geocode makes, so the two share the upstream cache and its
// one-a-second cap; only the answer's point and name are read here.
import { coordinates, invalid, locate as locateWith, type Ctx, type Located, type LocationFields } from "hearth";

export { coordinates };
export type Fields = LocationFields;
export type Point = Located<{ lat: number; lon: number; display_name: string }>;

const WEEK = 7 * 86_400;

function num(v: unknown): number {
  const n = typeof v === "number" ? v : typeof v === "string" ? Number(v) : NaN;
  if (!Number.isFinite(n)) throw new Error("Nominatim place without a numeric lat or lon");
  return n;
}

/** Nominatim's jsonv2 search answer, as points; a shape that is not one throws (the upstream layer makes that a 502). */
function parseSearch(body: unknown): { lat: number; lon: number; display_name: string }[] {
  if (!Array.isArray(body)) throw new Error("Nominatim search did not answer a list");
  return body.map((p) => {
    if (!p || typeof p !== "object") throw new Error("Nominatim place is not an object");
    return { lat: num(p.lat), lon: num(p.lon), display_name: typeof p.display_name === "string" ? p.display_name : "" };
  });
}

/** The single best match for a place name; a name nothing matches is that argument's fault, so it is a 400 naming it. */
export async function resolve(ctx: Ctx, field: string, text: string): Promise<{ place: { lat: number; lon: number; display_name: string } }> {
  const f = await ctx.http.get("NOMINATIM", "/search", { query: { q: text.trim(), format: "jsonv2", addressdetails: 1, limit: 1 }, ttl: WEEK, parse: parseSearch });
  const place = f.data[0];
  if (!place) throw invalid(field, `no place found for ${field} "${text}"; try a fuller name or give coordinates`);
  return { place };
}

export const locate = (ctx: Ctx, args: { lat?: number; lon?: number; name?: string }, fields: Fields, required: boolean): Promise<Point | null> =>
  locateWith(args, fields, required, async (field, text) => (await resolve(ctx, field, text)).place);
