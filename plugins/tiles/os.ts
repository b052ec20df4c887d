// Ordnance Survey's raster tiles (OS Maps API, ZXY in web mercator). A tile is
// fetched once with OS_MAPS_KEY and kept: the instance serves its own copy.
import { notConfigured, upstream, type Ctx, defineProvider } from "hearth";
import { tilesHeld } from "./schema.ts";

defineProvider({
  name: "OS_MAPS",
  label: "Ordnance Survey Maps API",
  url: "https://api.os.uk",
  concurrency: 4,
  // The Data Hub's limit is 600 transactions a minute per project.
  rate: { count: 10, perMs: 1000 },
  maxBytes: 2_000_000,
});

export const STYLES = { road: "Road_3857", outdoor: "Outdoor_3857", light: "Light_3857" } as const;
export type Style = keyof typeof STYLES;

export const attribution = (now: Date) => `Contains OS data © Crown copyright and database rights ${now.getUTCFullYear()}`;

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const isPng = (b: Uint8Array) => b.length > 8 && PNG.every((v, i) => b[i] === v);

// Two callers asking for one cold tile share one request (per instance: its settings object).
const inFlight = new WeakMap<object, Map<string, Promise<Uint8Array>>>();

/** The tile's bytes: the held copy, else fetched once from Ordnance Survey and kept. */
export async function tileBytes(ctx: Ctx, style: Style, z: number, x: number, y: number, hash: string | null): Promise<Uint8Array> {
  if (hash && (await ctx.blobs.exists(hash))) return ctx.blobs.read(hash);
  const key = ctx.config.OS_MAPS_KEY;
  if (!key) throw notConfigured(`this tile is not held here yet, and fetching it from Ordnance Survey needs OS_MAPS_KEY (a project key from the OS Data Hub)`);
  const id = `${style}/${z}/${x}/${y}`;
  let fetching = inFlight.get(ctx.config);
  if (!fetching) inFlight.set(ctx.config, (fetching = new Map()));
  const m = fetching;
  let job = m.get(id);
  if (!job) {
    job = (async () => {
      const r = await ctx.bytes.get("OS_MAPS", `/maps/raster/v1/zxy/${STYLES[style]}/${z}/${x}/${y}.png`, { query: { key }, accept: [401, 403] });
      if (r.status === 401 || r.status === 403)
        throw upstream("upstream_failed", `Ordnance Survey refused OS_MAPS_KEY (HTTP ${r.status}): check the key and that its project includes the OS Maps API`);
      if (!isPng(r.bytes)) throw upstream("upstream_failed", "Ordnance Survey sent something that is not a PNG tile");
      const now = ctx.clock.now().getTime();
      // Put in the write that stores the row naming it, so no release comes between.
      await ctx.writes(async (db) => {
        const h = await ctx.blobs.put(r.bytes);
        await db
          .insert(tilesHeld)
          .values({ style, z, x, y, hash: h, size: r.bytes.length, fetched: now })
          .onConflictDoUpdate({ target: [tilesHeld.style, tilesHeld.z, tilesHeld.x, tilesHeld.y], set: { hash: h, size: r.bytes.length, fetched: now } })
          .run();
      });
      return r.bytes;
    })();
    m.set(id, job);
    const done = () => m.delete(id);
    job.then(done, done);
  }
  return job;
}
