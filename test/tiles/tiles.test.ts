import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { startFixture } from "../upstream/fixture-server.ts";

const tilePng = (name: string) => readFileSync(join(import.meta.dir, "..", "fixtures", "os-maps", name));
const png = (bytes: Uint8Array) => new Response(new Uint8Array(bytes), { headers: { "content-type": "image/png" } });
// The OS Maps API answers a bad key the way its Apigee gateway does.
const fault = () =>
  new Response(JSON.stringify({ fault: { faultstring: "Invalid ApiKey", detail: { errorcode: "oauth.v2.InvalidApiKey" } } }), {
    status: 401,
    headers: { "content-type": "application/json" },
  });

const os = startFixture({
  "/maps/raster/v1/zxy/*": (q, req) => {
    if (q.get("key") !== "os-test-key") return fault();
    const path = new URL(req.url).pathname;
    return png(tilePng(path.includes("/Outdoor_3857/") ? "outdoor-tile.png" : "road-tile.png"));
  },
});

const dir = mkdtempSync(join(tmpdir(), "hearth-tiles-"));
const clock = new TestClock(new Date("2026-11-21T10:00:00Z").getTime());
let h: Hearth;
const env = { OS_MAPS_URL: os.url, UPSTREAM_TIMEOUT_MS: "5000" };
beforeAll(async () => {
  h = await startHearth({ clock, dataDir: dir, env: { ...env, OS_MAPS_KEY: "os-test-key" } });
});
afterAll(async () => {
  await h.stop();
  os.stop();
  rmSync(dir, { recursive: true, force: true });
});

// Trafalgar Square at zoom 12 and 15.
const LONDON_12 = { z: 12, x: 2046, y: 1362 };

describe("tile", () => {
  test("the instance's own URL for a tile, and whether it is held", async () => {
    const r = await h.call("tiles/tile", { ...LONDON_12, style: "outdoor" });
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({ ...LONDON_12, style: "outdoor", covered: true, held: false, url: `${h.url}/tiles/outdoor/12/2046/1362.png` });
    expect(r.body.result.attribution).toBe("Contains OS data © Crown copyright and database rights 2026");
  });

  test("zoom, column and row out of range are refused by field", async () => {
    const z = await h.call("tiles/tile", { z: 21, x: 0, y: 0 });
    expect(z.status).toBe(400);
    expect(z.body.error.field).toBe("z");
    const x = await h.call("tiles/tile", { z: 3, x: 8, y: 0 });
    expect(x.status).toBe(400);
    expect(x.body.error.field).toBe("x");
    const y = await h.call("tiles/tile", { z: 3, x: 0, y: -1 });
    expect(y.body.error.field).toBe("y");
    const missing = await h.call("tiles/tile", { z: 3, x: 0 });
    expect(missing.body.error.field).toBe("y");
    const style = await h.call("tiles/tile", { ...LONDON_12, style: "satellite" });
    expect(style.status).toBe(400);
    expect(style.body.error.field).toBe("style");
  });

  test("a tile outside Britain is not covered and its URL says why", async () => {
    const paris = await h.call("tiles/tile", { z: 12, x: 2074, y: 1409 });
    expect(paris.body.result.covered).toBe(false);
    expect(paris.body.result.note).toContain("Great Britain");
    const res = await fetch(paris.body.result.url);
    expect(res.status).toBe(404);
    expect(os.seen.length).toBe(0);
  });

  test("the URL serves the PNG, fetched from Ordnance Survey once with the key and then held", async () => {
    const url = `${h.url}/tiles/road/12/2046/1362.png`;
    const [a, b] = await Promise.all([fetch(url), fetch(url)]);
    expect(a.status).toBe(200);
    expect(a.headers.get("content-type")).toBe("image/png");
    const bytes = new Uint8Array(await a.arrayBuffer());
    expect(Buffer.from(bytes).equals(tilePng("road-tile.png"))).toBe(true);
    expect(new Uint8Array(await b.arrayBuffer()).length).toBe(bytes.length);
    expect(os.hits("/maps/raster/v1/zxy/Road_3857/12/2046/1362.png")).toBe(1);
    expect(os.last("/maps/raster/v1/zxy/Road_3857/12/2046/1362.png")!.query.get("key")).toBe("os-test-key");
    const again = await fetch(url);
    expect(again.status).toBe(200);
    await again.arrayBuffer();
    expect(os.hits("/maps/raster/v1/zxy/Road_3857/12/2046/1362.png")).toBe(1);
    const t = await h.call("tiles/tile", LONDON_12);
    expect(t.body.result.held).toBe(true);
  });

  test("a bad path is a 404, not a crash", async () => {
    expect((await fetch(`${h.url}/tiles/road/12/2046/abc.png`)).status).toBe(404);
    expect((await fetch(`${h.url}/tiles/sepia/12/2046/1362.png`)).status).toBe(404);
  });
});

describe("area", () => {
  test("every tile over a box, row by row from the north-west, with how many are held", async () => {
    // Central London at zoom 12: Trafalgar Square's tile and its neighbours.
    const r = await h.call("tiles/area", { north: 51.53, south: 51.49, west: -0.17, east: -0.07, zoom: 12 });
    expect(r.status).toBe(200);
    const res = r.body.result;
    expect(res.count).toBe(res.columns * res.rows);
    expect(res.tiles).toHaveLength(res.count);
    expect(res.tiles[0]).toMatchObject({ z: 12, x: 2046, y: 1361 });
    const order = res.tiles.map((t: any) => [t.y, t.x]);
    const sorted = [...order].sort((p: number[], q: number[]) => p[0] - q[0] || p[1] - q[1]);
    expect(order).toEqual(sorted);
    expect(res.held).toBe(1);
    expect(res.tiles.find((t: any) => t.held)).toMatchObject({ x: 2046, y: 1362, url: `${h.url}/tiles/road/12/2046/1362.png` });
  });

  test("a box too large at its zoom is a 400 with the tile count", async () => {
    const r = await h.call("tiles/area", { north: 58.6, south: 50.0, west: -5.7, east: 1.8, zoom: 12 });
    expect(r.status).toBe(400);
    expect(r.body.error.tiles).toBeGreaterThan(1024);
    expect(r.body.error.message).toContain(String(r.body.error.tiles));
  });

  test("edges in the wrong order or missing are refused by field", async () => {
    const flipped = await h.call("tiles/area", { north: 51, south: 52, west: 0, east: 1, zoom: 10 });
    expect(flipped.body.error.field).toBe("south");
    const missing = await h.call("tiles/area", { north: 52, south: 51, west: 0, zoom: 10 });
    expect(missing.body.error.field).toBe("east");
  });
});

describe("without a key", () => {
  test("held tiles are still served; a cold one is a 501 naming OS_MAPS_KEY", async () => {
    await h.stop();
    h = await startHearth({ clock, dataDir: dir, env });
    const before = os.seen.length;
    const held = await fetch(`${h.url}/tiles/road/12/2046/1362.png`);
    expect(held.status).toBe(200);
    expect(Buffer.from(await held.arrayBuffer()).equals(tilePng("road-tile.png"))).toBe(true);
    const cold = await fetch(`${h.url}/tiles/road/12/2047/1362.png`);
    expect(cold.status).toBe(501);
    expect((await cold.json()).error.message).toContain("OS_MAPS_KEY");
    expect(os.seen.length).toBe(before);
    const t = await h.call("tiles/tile", { z: 12, x: 2047, y: 1362 });
    expect(t.body.result.note).toContain("OS_MAPS_KEY");
  });

  test("a key Ordnance Survey refuses is a 502 and nothing is kept", async () => {
    await h.stop();
    h = await startHearth({ clock, dataDir: dir, env: { ...env, OS_MAPS_KEY: "wrong" } });
    const r = await fetch(`${h.url}/tiles/light/12/2046/1362.png`);
    expect(r.status).toBe(502);
    expect((await r.json()).error.message).toContain("refused OS_MAPS_KEY");
    const t = await h.call("tiles/tile", { ...LONDON_12, style: "light" });
    expect(t.body.result.held).toBe(false);
  });
});
