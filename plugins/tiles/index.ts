import { Type as T } from "@sinclair/typebox";
import { and, between, eq } from "drizzle-orm";
import { HearthError, invalid, notFound, definePlugin, read, type Ctx } from "hearth";
import { MAX_LAT, outsideCoverage, tileX, tileY, tilesAcross } from "./grid.ts";
import { attribution, STYLES, tileBytes, type Style } from "./os.ts";
import { tilesHeld } from "./schema.ts";

// An area answer lists every tile: past this many it is a download, not a map view.
const MAX_AREA_TILES = 1024;

const StyleArg = T.Optional(
  T.Union([T.Literal("road"), T.Literal("outdoor"), T.Literal("light")], {
    description: "road (default), outdoor (rights of way and contours) or light (a quiet basemap).",
  }),
);
const Zoom = (d: string) => T.Optional(T.Integer({ minimum: 0, maximum: 20, description: d }));

function need<V>(v: V | undefined, field: string, what: string): V {
  if (v === undefined) throw invalid(field, `${field} is required: ${what}`);
  return v;
}

function checkTile(z: number, x: number, y: number) {
  const n = tilesAcross(z);
  if (x < 0 || x >= n) throw invalid("x", `x must be 0 to ${n - 1} at zoom ${z} (got ${x})`);
  if (y < 0 || y >= n) throw invalid("y", `y must be 0 to ${n - 1} at zoom ${z} (got ${y})`);
}

const urlOf = (ctx: Ctx, style: Style, z: number, x: number, y: number) => `${ctx.baseUrl.replace(/\/+$/, "")}/tiles/${style}/${z}/${x}/${y}.png`;

function heldRow(ctx: Ctx, style: Style, z: number, x: number, y: number) {
  return ctx.db
    .select({ hash: tilesHeld.hash })
    .from(tilesHeld)
    .where(and(eq(tilesHeld.style, style), eq(tilesHeld.z, z), eq(tilesHeld.x, x), eq(tilesHeld.y, y)))
    .get();
}

export default definePlugin({
  name: "tiles",
  description:
    "Ordnance Survey map tiles of Great Britain (road, outdoor, light), served by this instance from its own copies: each is fetched once with the instance's OS key and kept.",
  needs: ["db", "blobs", "bytes", "writes"],
  providers: ["OS_MAPS"],
  config: {
    OS_MAPS_KEY: { default: "", description: "Project API key from the OS Data Hub (OS Maps API). Without it only tiles already held are served." },
    OS_MAPS_URL: { default: "", description: "Base URL of the OS Maps API (https://api.os.uk when empty)." },
  },
  methods: {
    tile: read({
      description:
        "The URL on this instance of one map tile (web mercator z/x/y, z 0 to 20; x and y 0 to 2^z-1). Free. Great Britain only, drawn from zoom 7. `outdoor` has rights of way and contours; `light` is a quiet basemap. Says whether the tile is already held; a tile not held is fetched on first use, which needs OS_MAPS_KEY.",
      args: T.Object({
        z: Zoom("Zoom, 0 to 20."),
        x: T.Optional(T.Integer({ description: "Column, 0 at the antimeridian going east." })),
        y: T.Optional(T.Integer({ description: "Row, 0 at the top (north) going south." })),
        style: StyleArg,
      }),
      access: "public",
      async run(a, ctx) {
        const z = need(a.z, "z", "the zoom, 0 to 20");
        const x = need(a.x, "x", "the tile column");
        const y = need(a.y, "y", "the tile row");
        const style = a.style ?? "road";
        checkTile(z, x, y);
        const outside = outsideCoverage(z, x, y);
        const held = !!(await heldRow(ctx, style, z, x, y));
        const key = !!ctx.config.OS_MAPS_KEY;
        return {
          z,
          x,
          y,
          style,
          url: urlOf(ctx, style, z, x, y),
          covered: outside === null,
          held,
          ...(outside ? { note: `${outside}.` } : !held && !key ? { note: "This tile is not held yet, and fetching it needs OS_MAPS_KEY: until one is set its URL answers 501." } : {}),
          attribution: attribution(ctx.clock.now()),
        };
      },
    }),

    area: read({
      description: `Every tile covering a bounding box at a zoom, as URLs on this instance, row by row from the north-west, and how many are already held. At most ${MAX_AREA_TILES} tiles: a larger box or a higher zoom is refused with the count it would need.`,
      args: T.Object({
        north: T.Optional(T.Number({ minimum: -90, maximum: 90, description: "Northern edge, degrees latitude." })),
        south: T.Optional(T.Number({ minimum: -90, maximum: 90, description: "Southern edge, degrees latitude." })),
        east: T.Optional(T.Number({ minimum: -180, maximum: 180, description: "Eastern edge, degrees longitude." })),
        west: T.Optional(T.Number({ minimum: -180, maximum: 180, description: "Western edge, degrees longitude." })),
        zoom: Zoom("Zoom, 0 to 20."),
        style: StyleArg,
      }),
      access: "public",
      async run(a, ctx) {
        const north = need(a.north, "north", "the northern edge in degrees");
        const south = need(a.south, "south", "the southern edge in degrees");
        const east = need(a.east, "east", "the eastern edge in degrees");
        const west = need(a.west, "west", "the western edge in degrees");
        const z = need(a.zoom, "zoom", "0 to 20");
        const style = a.style ?? "road";
        if (south >= north) throw invalid("south", `south (${south}) must be below north (${north})`);
        if (west >= east) throw invalid("west", `west (${west}) must be west of east (${east})`);
        if (south > MAX_LAT || north < -MAX_LAT) throw invalid("north", `web-mercator tiles reach ${MAX_LAT.toFixed(4)}° north and south`);
        const x0 = tileX(west, z);
        const x1 = tileX(east, z);
        const y0 = tileY(north, z);
        const y1 = tileY(south, z);
        const columns = x1 - x0 + 1;
        const rows = y1 - y0 + 1;
        const count = columns * rows;
        if (count > MAX_AREA_TILES)
          throw new HearthError(
            "invalid_argument",
            `that box needs ${count} tiles at zoom ${z} (${columns} × ${rows}); at most ${MAX_AREA_TILES} are listed: a smaller box or a lower zoom`,
            { field: "zoom", extra: { tiles: count } },
          );
        const held = new Set(
          (
            await ctx.db
              .select({ x: tilesHeld.x, y: tilesHeld.y })
              .from(tilesHeld)
              .where(and(eq(tilesHeld.style, style), eq(tilesHeld.z, z), between(tilesHeld.x, x0, x1), between(tilesHeld.y, y0, y1)))
              .all()
          ).map((r) => `${r.x}/${r.y}`),
        );
        const tiles = [];
        let covered = 0;
        for (let y = y0; y <= y1; y++)
          for (let x = x0; x <= x1; x++) {
            const inside = outsideCoverage(z, x, y) === null;
            if (inside) covered++;
            tiles.push({ z, x, y, url: urlOf(ctx, style, z, x, y), held: held.has(`${x}/${y}`), ...(inside ? {} : { covered: false }) });
          }
        return {
          zoom: z,
          style,
          bounds: { north, south, east, west },
          columns,
          rows,
          count,
          held: held.size,
          covered,
          ...(covered < count ? { note: `${count - covered} of these tiles lie outside Ordnance Survey's coverage of Great Britain${z < 7 ? " or below zoom 7" : ""} and are not served.` } : {}),
          ...(held.size < covered && !ctx.config.OS_MAPS_KEY ? { key_needed: "Tiles not yet held are fetched on first use, which needs OS_MAPS_KEY." } : {}),
          tiles,
          attribution: attribution(ctx.clock.now()),
        };
      },
    }),
  },
  routes: [
    {
      method: "GET",
      path: "/tiles/:style/:z/:x/:y",
      async run(_req, ctx) {
        const { params } = ctx;
        const style = params.style as Style;
        if (!(style in STYLES)) throw notFound(`no tile style "${params.style}": road, outdoor or light`);
        const m = /^(\d+)\.png$/.exec(params.y ?? "");
        const [z, x] = [params.z, params.x].map((v) => (/^\d+$/.test(v ?? "") ? Number(v) : NaN));
        if (!m || !Number.isInteger(z) || !Number.isInteger(x)) throw notFound("a tile is /tiles/<style>/<z>/<x>/<y>.png");
        const y = Number(m[1]);
        if (z > 20) throw invalid("z", `z must be 0 to 20 (got ${z})`);
        checkTile(z, x, y);
        const outside = outsideCoverage(z, x, y);
        if (outside) throw notFound(outside);
        const bytes = await tileBytes(ctx, style, z, x, y, (await heldRow(ctx, style, z, x, y))?.hash ?? null);
        return new Response(new Uint8Array(bytes), {
          headers: {
            "content-type": "image/png",
            "cache-control": "public, max-age=604800",
            "x-attribution": attribution(ctx.clock.now()),
          },
        });
      },
    },
  ],
});
