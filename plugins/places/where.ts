// A location given either as a place name (`near`, `place`) or as `lat` and
// `lon`, resolved to one point: the SDK's rules, with names geocoded here.
import { coordinates, locate as locateWith, type Ctx, type Located, type LocationFields } from "hearth";
import { resolve, type Place } from "./nominatim.ts";

export { coordinates };
export type Fields = LocationFields;
export type Point = Located<Place>;

export const locate = (ctx: Ctx, args: { lat?: number; lon?: number; name?: string }, fields: Fields, required: boolean): Promise<Point | null> =>
  locateWith(args, fields, required, async (field, text) => (await resolve(ctx, field, text)).place);

/** Great-circle distance in metres. */
export function metres(a: { lat: number; lon: number }, b: { lat: number; lon: number }): number {
  const r = (d: number) => (d * Math.PI) / 180;
  const h = Math.sin(r(b.lat - a.lat) / 2) ** 2 + Math.cos(r(a.lat)) * Math.cos(r(b.lat)) * Math.sin(r(b.lon - a.lon) / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.min(1, Math.sqrt(h)));
}
