import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { settle } from "../../core/upstream/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { json, recorded, startFixture } from "../upstream/fixture-server.ts";

const off = (f: string) => recorded("open-food-facts", f);
const fixture = startFixture({
  "/api/v2/product/3017624010701": () => json(off("product-3017624010701.json")),
  "/api/v2/product/5000000000017": () => json(off("product-5000000000017.json")),
  "/api/v2/product/4061458123456": () => json(off("product-not-found.json"), 404),
  "/cgi/search.pl": () => json(off("search-hazelnut.json")),
  "/Establishments": (q) => json(recorded("fsa", q.has("latitude") ? "establishments-near.json" : "establishments-name.json")),
});

const clock = new TestClock(new Date("2026-11-21T10:00:00Z").getTime());
let h: Hearth;
beforeAll(async () => {
  h = await startHearth({ clock, env: { OPEN_FOOD_FACTS_URL: fixture.url, FSA_URL: fixture.url, UPSTREAM_TIMEOUT_MS: "5000", UPSTREAM_RETRY_MS: "1" } });
});
afterAll(async () => {
  await settle(h.rt);
  await h.stop();
  fixture.stop();
});

describe("product", () => {
  test("name, brand, ingredients, allergens, nutrition per 100 g, Nutri-Score and NOVA", async () => {
    const r = await h.call("food/product", { barcode: "3017624010701" });
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({
      barcode: "3017624010701",
      name: "Nutella",
      brand: "Nutella,Ferrero",
      quantity: "400 g",
      allergens: ["milk", "nuts", "soybeans"],
      allergens_note: null,
      nutrition_per_100g: {
        energy_kcal: 539,
        fat_g: 30.9,
        saturated_fat_g: 10.6,
        carbohydrates_g: 57.5,
        sugars_g: 56.3,
        fiber_g: null,
        proteins_g: 6.3,
        salt_g: 0.107,
      },
      nutri_score: "E",
      nova_group: 4,
      processing: "ultra-processed",
      source: "Open Food Facts",
    });
    expect(r.body.result.ingredients).toStartWith("Sugar, palm oil, hazelnuts 13%");
    expect(r.body.result.not_on_record).toEqual(["nutrition.fiber_g"]);
    const seen = fixture.last("/api/v2/product/3017624010701")!;
    expect(seen.query.get("fields")).toContain("allergens_tags");
    expect(seen.headers.get("user-agent")).toStartWith("Hearth/");
  });

  test("where the record is silent the answer says so, not none", async () => {
    const r = await h.call("food/product", { barcode: "5000000000017" });
    expect(r.status).toBe(200);
    const p = r.body.result;
    expect(p).toMatchObject({ name: "Oat biscuits", brand: null, ingredients: null, allergens: null, nutri_score: null, nova_group: null });
    expect(p.allergens_note).toContain("not stated");
    expect(p.not_on_record).toEqual(
      expect.arrayContaining(["ingredients", "allergens", "nutri_score", "nova_group", "nutrition.energy_kcal", "nutrition.salt_g"]),
    );
    expect(p.nutrition_per_100g.fat_g).toBeNull();
  });

  test("an unknown barcode is a 404, and that answer is cached too", async () => {
    const r = await h.call("food/product", { barcode: "4061458123456" });
    expect(r.status).toBe(404);
    expect(r.body.error.message).toContain("4061458123456");
    await h.call("food/product", { barcode: "4061458123456" });
    expect(fixture.hits("/api/v2/product/4061458123456")).toBe(1);
  });

  test("barcode must be 6 to 14 digits", async () => {
    for (const barcode of ["12345", "123456789012345", "30176240107a1", " 3017624010701", ""]) {
      const r = await h.call("food/product", { barcode });
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe("barcode");
    }
    expect((await h.call("food/product", {})).body.error.field).toBe("barcode");
  });
});

describe("search", () => {
  test("products with their barcodes, limit 10 by default", async () => {
    const r = await h.call("food/search", { query: "hazelnut  spread" });
    expect(r.status).toBe(200);
    expect(r.body.result.query).toBe("hazelnut spread");
    expect(r.body.result.total).toBe(1734);
    expect(r.body.result.products.map((p: any) => [p.barcode, p.name, p.nutri_score])).toEqual([
      ["3017624010701", "Nutella", "E"],
      ["8001505005707", "Nocciolata", "E"],
      ["3560070821548", "Pâte à tartiner noisettes cacao", null],
    ]);
    const q = fixture.last("/cgi/search.pl")!.query;
    expect([q.get("search_terms"), q.get("page_size"), q.get("json")]).toEqual(["hazelnut spread", "10", "1"]);
  });

  test("limit bounds 1 to 25; a query is required", async () => {
    const two = await h.call("food/search", { query: "nutella", limit: 2 });
    expect(two.body.result.products).toHaveLength(2);
    expect(fixture.last("/cgi/search.pl")!.query.get("page_size")).toBe("2");
    for (const limit of [0, 26]) {
      const r = await h.call("food/search", { query: "nutella", limit });
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe("limit");
    }
    expect((await h.call("food/search", {})).body.error.field).toBe("query");
    expect((await h.call("food/search", { query: "   " })).body.error.field).toBe("query");
  });
});

describe("hygiene", () => {
  test("by name: ratings from both schemes, with addresses", async () => {
    const r = await h.call("food/hygiene", { name: "Golden Hind" });
    expect(r.status).toBe(200);
    const places = r.body.result.places;
    expect(places.map((p: any) => [p.name, p.rating])).toEqual([
      ["The Golden Hind", "5"],
      ["GOLDEN HIND TAKEAWAY", "Improvement Required"],
      ["Golden Hind Cakes", "Exempt"],
    ]);
    expect(places[0]).toMatchObject({
      address: "73 Marylebone Lane, London",
      postcode: "W1U 2PN",
      rated_on: "2025-03-12",
      authority: "Westminster",
      lat: 51.517012,
      lon: -0.150231,
    });
    expect(places[1].scheme).toContain("FHIS");
    expect(places[2]).toMatchObject({ address: null, lat: null, lon: null });
    const seen = fixture.last("/Establishments")!;
    expect(seen.headers.get("x-api-version")).toBe("2");
    expect([seen.query.get("name"), seen.query.get("pageSize")]).toEqual(["Golden Hind", "10"]);
    expect(seen.query.has("latitude")).toBe(false);
  });

  test("near a point: nearest first within a mile, distances in km", async () => {
    const r = await h.call("food/hygiene", { lat: 51.5033, lon: -0.1276, limit: 5 });
    expect(r.status).toBe(200);
    expect(r.body.result.places.map((p: any) => [p.name, p.distance_km, p.new_rating_pending])).toEqual([
      ["Pret A Manger", 0.36, false],
      ["The Red Lion", 0.67, true],
    ]);
    const q = fixture.last("/Establishments")!.query;
    expect([q.get("latitude"), q.get("longitude"), q.get("maxDistanceLimit"), q.get("sortOptionKey"), q.get("pageSize")]).toEqual([
      "51.5033",
      "-0.1276",
      "1",
      "distance",
      "5",
    ]);
  });

  test("where is passed as the address; something to search by is required", async () => {
    await h.call("food/hygiene", { where: "SW1A 2DD" });
    expect(fixture.last("/Establishments")!.query.get("address")).toBe("SW1A 2DD");
    expect((await h.call("food/hygiene", {})).body.error.field).toBe("name");
    expect((await h.call("food/hygiene", { lat: 51.5 })).body.error.field).toBe("lon");
    expect((await h.call("food/hygiene", { lon: -0.1 })).body.error.field).toBe("lat");
    for (const limit of [0, 31]) expect((await h.call("food/hygiene", { name: "x", limit })).body.error.field).toBe("limit");
  });
});

describe("when a provider fails", () => {
  test("500 and garbage are 502s, silence a 504, and a held copy answers stale", async () => {
    fixture.fail = "500";
    expect((await h.call("food/product", { barcode: "12345678" })).status).toBe(502);
    fixture.fail = "garbage";
    expect((await h.call("food/product", { barcode: "12345678" })).status).toBe(502);
    fixture.fail = "hang";
    expect((await h.call("food/hygiene", { name: "Nobody" })).status).toBe(504);
    clock.advance(3 * 86_400_000);
    fixture.fail = "503";
    const r = await h.call("food/product", { barcode: "3017624010701" });
    fixture.fail = null;
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({ name: "Nutella", stale: true, age_seconds: 3 * 86_400 });
  });
});
