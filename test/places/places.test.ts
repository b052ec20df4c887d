// places against loopback Nominatim, Overpass and Open-Meteo servers replaying
// payloads in their real formats: every argument rule, what is sent to each
// provider, distance order, prices and free cache hits, and each way a
// provider can fail.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { settle } from "../../core/upstream/index.ts";
import { startHearth, TestClock } from "../harness.ts";
import { balance as balanceOf, funded as fund } from "./credits.ts";
import { json, provider, recorded } from "./provider.ts";

const nominatim = provider({
  "/search": (r) => {
    const q = r.query.get("q");
    if (q === "London") return json(recorded("nominatim", "search-london.json"));
    if (q === "King's Cross") return json(recorded("nominatim", "search-king-s-cross.json"));
    return json(recorded("nominatim", "search-empty.json"));
  },
  "/reverse": (r) => json(recorded("nominatim", r.query.get("lat") === "51.50344" ? "reverse-downing-street.json" : "reverse-unable.json")),
});
let overpassAnswer = "around-trafalgar.json";
/** The recorded answer with its named places repeated under new ids, as a busy city centre answers. */
function crowded(count: number): string {
  const base = JSON.parse(recorded("overpass", "around-trafalgar.json"));
  const named = base.elements.filter((e: { tags: { name?: string } }) => e.tags.name);
  base.elements = Array.from({ length: count }, (_, i) => ({ ...named[i % named.length], id: 9_000_000_000 + i }));
  return JSON.stringify(base);
}
const overpass = provider({ "/api/interpreter": () => json(overpassAnswer === "crowded" ? crowded(300) : recorded("overpass", overpassAnswer)) });
const meteo = provider({ "/v1/elevation": () => json(recorded("open-meteo-elevation", "berlin.json")) });

const clock = new TestClock(new Date("2026-11-21T10:00:00Z").getTime());
let h: Awaited<ReturnType<typeof startHearth>>;
beforeAll(async () => {
  h = await startHearth({
    clock,
    env: {
      HEARTH_METER_ACCOUNTS: "all", 
      NOMINATIM_URL: nominatim.url,
      OVERPASS_URL: overpass.url,
      OPEN_METEO_URL: meteo.url,
      OVERPASS_TIMEOUT_MS: "5000",
      UPSTREAM_RETRY_MS: "1",
      HEARTH_RATE_READS: "0",
      HEARTH_RATE_PRICED: "0",
    },
  });
});
afterAll(async () => {
  await settle(h.rt);
  await h.stop();
  for (const p of [nominatim, overpass, meteo]) p.stop();
});

const funded = (name: string, credits: number) => fund(h, name, credits);

const TRAFALGAR = { lat: 51.508, lon: -0.1281 };

describe("geocode", () => {
  test("a name to places, best first, asking Nominatim for jsonv2 as its policy asks", async () => {
    const r = await h.call("places/geocode", { address: "London" });
    expect(r.status).toBe(200);
    const g = r.body.result;
    expect(g.places[0]).toMatchObject({
      name: "London",
      lat: 51.5074456,
      lon: -0.1277653,
      category: "place",
      type: "city",
      address: { country_code: "gb", state: "England" },
      bbox: [51.2867601, 51.6918741, -0.5103751, 0.3340155],
      osm: { type: "relation", id: 65606 },
    });
    expect(g.places[1].display_name).toBe("London, Southwestern Ontario, Ontario, Canada");
    expect(g).toMatchObject({ source: "OpenStreetMap Nominatim", attribution: "© OpenStreetMap contributors, ODbL", cached: false });
    const sent = nominatim.last("/search")!;
    expect(sent.query.get("format")).toBe("jsonv2");
    expect(sent.query.get("addressdetails")).toBe("1");
    expect(sent.headers.get("user-agent")).toStartWith("Hearth/");
  });

  test("asked again, the cached copy answers and nothing is sent", async () => {
    const before = nominatim.count("/search");
    const r = await h.call("places/geocode", { address: "London" });
    expect(r.body.result.cached).toBe(true);
    expect(nominatim.count("/search")).toBe(before);
  });

  test("address rules and a name nothing matches", async () => {
    for (const args of [{}, { address: "" }, { address: "   " }, { address: "x".repeat(301) }]) {
      const r = await h.call("places/geocode", args);
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe("address");
    }
    const none = await h.call("places/geocode", { address: "Nowhere-at-all" });
    expect(none.status).toBe(404);
    expect(none.body.error.message).toContain("Nowhere-at-all");
  });
});

describe("address", () => {
  test("names the place at a point", async () => {
    const r = await h.call("places/address", { lat: 51.50344, lon: -0.12771 });
    expect(r.status).toBe(200);
    expect(r.body.result.place).toMatchObject({
      name: "Prime Minister’s Office",
      category: "office",
      type: "government",
      address: { house_number: "10", road: "Downing Street", postcode: "SW1A 2AA" },
    });
    expect(nominatim.last("/reverse")!.query.get("format")).toBe("jsonv2");
  });

  test("a point with nothing to name is a 404; coordinates are checked", async () => {
    const r = await h.call("places/address", { lat: 0, lon: -30 });
    expect(r.status).toBe(404);
    expect((await h.call("places/address", { lat: 95, lon: 0 })).body.error.field).toBe("lat");
    expect((await h.call("places/address", { lat: 1 })).body.error.field).toBe("lon");
  });
});

describe("elevation", () => {
  test("metres and feet at a point, and at a place geocoded first", async () => {
    const r = await h.call("places/elevation", { lat: 52.52, lon: 13.41 });
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({ lat: 52.52, lon: 13.41, metres: 38, feet: 125, source: "Open-Meteo" });
    expect(r.body.result.model).toContain("90 m");
    expect(meteo.last("/v1/elevation")!.query.get("latitude")).toBe("52.52");

    const p = await h.call("places/elevation", { place: "London" });
    expect(p.body.result).toMatchObject({ lat: 51.5074456, lon: -0.1277653, place: "London, Greater London, England, United Kingdom" });
    expect(meteo.last("/v1/elevation")!.query.get("latitude")).toBe("51.5074");
  });

  test("a place or lat and lon, not neither, not both, not half", async () => {
    for (const [args, field] of [
      [{}, "place"],
      [{ lat: 10 }, "lon"],
      [{ lon: 10 }, "lat"],
      [{ place: "London", lat: 1, lon: 2 }, "place"],
      [{ place: "Nowhere-at-all" }, "place"],
      [{ lat: 10, lon: 200 }, "lon"],
    ] as const) {
      const r = await h.call("places/elevation", args as Record<string, unknown>);
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe(field);
    }
  });
});

describe("nearby", () => {
  test("priced: a stranger is told it costs credits, an account is charged 4", async () => {
    const stranger = await h.call("places/nearby", TRAFALGAR);
    expect(stranger.status).toBe(402);
    expect(stranger.body.error.message).toContain("4 credits");
    const token = await funded("nina", 20);
    const me = "nina";
    const r = await h.call("places/nearby", TRAFALGAR, { token });
    expect(r.status).toBe(200);
    expect(await balanceOf(h, me)).toBe(16);
  });

  test("nearest first, named places only, with what OSM says of each", async () => {
    const token = await funded("nora", 20);
    const me = "nora";
    overpassAnswer = "around-trafalgar.json";
    const r = await h.call("places/nearby", { ...TRAFALGAR, radius: 500 }, { token });
    expect(r.status).toBe(200);
    const n = r.body.result;
    expect(n.center).toEqual(TRAFALGAR);
    expect(n.radius_m).toBe(500);
    const d = n.places.map((p: { distance_m: number }) => p.distance_m);
    expect(d).toEqual([...d].sort((a, b) => a - b));
    expect(n.places.every((p: { name: string }) => p.name)).toBe(true);
    const gallery = n.places.find((p: { name: string }) => p.name === "National Gallery");
    expect(gallery).toMatchObject({ category: "tourism", kind: "museum", address: "Trafalgar Square, London, WC2N 5DN", osm: { type: "way", id: 4253234 } });
    expect(n.places.find((p: { name: string }) => p.name === "Boots")).toMatchObject({ kind: "pharmacy", phone: "+44 20 7930 4761" });
    expect(n).toMatchObject({ source: "OpenStreetMap Overpass API", data_as_of: "2026-11-21T09:41:32Z" });

    const sent = overpass.last("/api/interpreter")!;
    expect(sent.method).toBe("POST");
    const ql = new URLSearchParams(sent.body).get("data")!;
    expect(ql).toContain("[out:json]");
    expect(ql).toContain("(around:500,51.508000,-0.128100)");
    expect(ql).toContain("out center tags");
  });

  test("the same question again is served from cache and not charged", async () => {
    const token = await funded("olga", 20);
    const me = "olga";
    const args = { ...TRAFALGAR, radius: 700, query: "coffee" };
    const first = await h.call("places/nearby", args, { token });
    expect(first.body.result.cached).toBe(false);
    expect(await balanceOf(h, me)).toBe(16);
    const sent = overpass.count("/api/interpreter");
    const again = await h.call("places/nearby", args, { token });
    expect(again.body.result.cached).toBe(true);
    expect(overpass.count("/api/interpreter")).toBe(sent);
    expect(await balanceOf(h, me)).toBe(16);
    // Free when cached, so a stranger may have it too.
    expect((await h.call("places/nearby", args)).status).toBe(200);
  });

  test("query keeps to a kind or a name, best matches first", async () => {
    const token = await funded("pia", 40);
    const me = "pia";
    const coffee = (await h.call("places/nearby", { ...TRAFALGAR, query: "coffee" }, { token })).body.result;
    expect(coffee.places.slice(0, 2).map((p: { name: string }) => p.name).sort()).toEqual(["Café in the Crypt", "Pret A Manger"]);
    const ql = new URLSearchParams(overpass.last("/api/interpreter")!.body).get("data")!;
    expect(ql).toContain('["amenity"="cafe"]');
    const italian = (await h.call("places/nearby", { ...TRAFALGAR, query: "italian" }, { token })).body.result;
    expect(italian.places[0]).toMatchObject({ name: "Bella Italia", cuisine: "italian" });
  });

  test("nothing beyond the radius, even when the provider sends it", async () => {
    const token = await funded("ray", 20);
    const r = (await h.call("places/nearby", { ...TRAFALGAR, radius: 150 }, { token })).body.result;
    expect(r.places.length).toBeGreaterThan(0);
    for (const p of r.places) expect(p.distance_m).toBeLessThanOrEqual(158);
    expect(r.places.map((p: { name: string }) => p.name)).not.toContain("Bella Italia"); // about 220 m away
  });

  test("when Overpass sends as many as it was asked for, the answer says there were more", async () => {
    const token = await funded("tia", 20);
    overpassAnswer = "crowded";
    const r = (await h.call("places/nearby", { lat: 51.5081, lon: -0.1281 }, { token })).body.result;
    overpassAnswer = "around-trafalgar.json";
    expect(r.count).toBe(25);
    expect(r.note).toContain("smaller radius");
    const calm = (await h.call("places/nearby", { lat: 51.5082, lon: -0.1281 }, { token })).body.result;
    expect(calm.note).toBeUndefined();
  });

  test("near given as \"lat,lon\" needs no geocoder", async () => {
    const token = await funded("sue", 20);
    const before = nominatim.count("/search");
    const r = await h.call("places/nearby", { near: "51.508, -0.1281", radius: 400 }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result.center).toEqual(TRAFALGAR);
    expect(nominatim.count("/search")).toBe(before);
    expect((await h.call("places/nearby", { near: "95,0" }, { token })).body.error.field).toBe("near");
  });

  test("near a named place: geocoded first", async () => {
    const token = await funded("quin", 20);
    const me = "quin";
    const r = await h.call("places/nearby", { near: "London" }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result.center).toMatchObject({ lat: 51.5074456, lon: -0.1277653, place: "London, Greater London, England, United Kingdom" });
    expect(r.body.result.radius_m).toBe(1000);
  });

  test("argument rules", async () => {
    const token = await funded("rita", 100);
    const me = "rita";
    for (const [args, field] of [
      [{}, "near"],
      [{ lat: 51.5 }, "lon"],
      [{ near: "London", lat: 51.5, lon: 0 }, "near"],
      [{ ...TRAFALGAR, radius: 5001 }, "radius"],
      [{ ...TRAFALGAR, radius: 0 }, "radius"],
      [{ ...TRAFALGAR, query: "" }, "query"],
      [{ near: "Nowhere-at-all" }, "near"],
      [{ ...TRAFALGAR, open: true }, "open"],
    ] as const) {
      const r = await h.call("places/nearby", args as Record<string, unknown>, { token });
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe(field);
    }
    // Refusals cost nothing.
    expect(await balanceOf(h, me)).toBe(100);
  });
});

describe("search", () => {
  test("near a point: Overpass within the radius, 5 credits", async () => {
    const token = await funded("sam", 20);
    const me = "sam";
    const r = await h.call("places/search", { query: "National Gallery", ...TRAFALGAR }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result.radius_m).toBe(2000);
    expect(r.body.result.places[0].name).toBe("National Gallery");
    expect(new URLSearchParams(overpass.last("/api/interpreter")!.body).get("data")).toContain("around:2000,");
    expect(await balanceOf(h, me)).toBe(15);
  });

  test("with no location: the geocoder's best matches anywhere", async () => {
    const token = await funded("tom", 20);
    const me = "tom";
    const r = await h.call("places/search", { query: "King's Cross" }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result.places[0]).toMatchObject({ name: "London King's Cross", category: "railway", type: "station" });
    expect(nominatim.last("/search")!.query.get("limit")).toBe("10");
  });

  test("argument rules", async () => {
    const token = await funded("uma", 100);
    const me = "uma";
    for (const [args, field] of [
      [{}, "query"],
      [{ query: "" }, "query"],
      [{ query: "cafe", ...TRAFALGAR, radius: 10001 }, "radius"],
      [{ query: "cafe", lon: 1 }, "lat"],
      [{ query: "cafe", near: "Nowhere-at-all" }, "near"],
    ] as const) {
      const r = await h.call("places/search", args as Record<string, unknown>, { token });
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe(field);
    }
  });
});

describe("when a provider fails", () => {
  // Each case asks at a point no earlier test cached, a few metres apart.
  let n = 0;
  const fresh = () => ({ lat: TRAFALGAR.lat + ++n / 100_000, lon: TRAFALGAR.lon });

  test("500 is a 502, garbage a 502, 503 a 503, silence a 504 — all retryable, none charged", async () => {
    const token = await funded("vic", 100);
    const me = "vic";
    for (const [fail, status, kind] of [
      ["500", 502, "upstream_failed"],
      ["garbage", 502, "upstream_failed"],
      ["503", 503, "upstream_unavailable"],
      ["hang", 504, "upstream_timeout"],
    ] as const) {
      overpass.fail = fail;
      const r = await h.call("places/nearby", fresh(), { token });
      expect(r.status).toBe(status);
      expect(r.body.error).toMatchObject({ kind, retry: true });
    }
    overpass.fail = null;
    expect(await balanceOf(h, me)).toBe(100);
  });

  test("Overpass giving up on a query (a runtime-error remark) is a 504 and is not kept", async () => {
    const token = await funded("wes", 100);
    const me = "wes";
    const at = fresh();
    overpassAnswer = "runtime-timeout.json";
    const r = await h.call("places/nearby", at, { token });
    expect(r.status).toBe(504);
    expect(r.body.error.message).toContain("smaller radius");
    overpassAnswer = "around-trafalgar.json";
    const sent = overpass.count("/api/interpreter");
    const again = await h.call("places/nearby", at, { token });
    expect(again.status).toBe(200);
    expect(overpass.count("/api/interpreter")).toBe(sent + 1);
  });

  test("a copy past its day is served, marked stale, while the provider is down", async () => {
    const token = await funded("xan", 100);
    const me = "xan";
    const at = fresh();
    overpassAnswer = "around-trafalgar.json";
    expect((await h.call("places/nearby", at, { token })).status).toBe(200);
    clock.advance(3 * 86_400_000);
    overpass.fail = "500";
    const r = await h.call("places/nearby", at, { token });
    overpass.fail = null;
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({ cached: true, stale: true });
    expect(r.body.result.places.length).toBeGreaterThan(0);
  });

  test("the geocoder failing fails the call that needed it", async () => {
    nominatim.fail = "503";
    const r = await h.call("places/geocode", { address: "Somewhere new" });
    nominatim.fail = null;
    expect(r.status).toBe(503);
    expect(r.body.error.retry).toBe(true);
  });
});
