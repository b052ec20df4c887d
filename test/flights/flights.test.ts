import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { settle } from "../../core/upstream/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { json, recorded, startFixture } from "../upstream/fixture-server.ts";

const adsb = startFixture({
  "/v2/point/*": () => json(recorded("adsb", "point-heathrow.json")),
  "/v2/callsign/BAW117": () => json(recorded("adsb", "callsign-baw117.json")),
  "/v2/callsign/*": () => json(recorded("adsb", "empty.json")),
  "/v2/reg/*": () => json(recorded("adsb", "empty.json")),
});
const nominatim = startFixture({
  "/search": (q) => json(recorded("nominatim", q.get("q") === "London" ? "search-london.json" : "search-empty.json")),
});

const clock = new TestClock(new Date("2026-11-21T10:00:00Z").getTime());
let h: Hearth;
beforeAll(async () => {
  h = await startHearth({
    clock,
    env: { ADSB_URL: adsb.url, NOMINATIM_URL: nominatim.url, UPSTREAM_TIMEOUT_MS: "5000", UPSTREAM_RETRY_MS: "1" },
  });
});
afterAll(async () => {
  await settle(h.rt);
  await h.stop();
  adsb.stop();
  nominatim.stop();
});

describe("overhead", () => {
  test("aircraft near a point, nearest first, with altitude, speed, heading and distance; positionless ones left out", async () => {
    const r = await h.call("flights/overhead", { lat: 51.4706, lon: -0.461941, radius: 10 });
    expect(r.status).toBe(200);
    const res = r.body.result;
    expect(adsb.last("/v2/point/51.471/-0.462/10")).toBeDefined();
    expect(res.count).toBe(4);
    expect(res.aircraft.map((a: any) => a.callsign)).toEqual(["BAW476", "EZY45TK", "VIR3", "BAW117"]);
    expect(res.aircraft[0]).toMatchObject({ on_ground: true, altitude_ft: null, registration: "G-EUPT", type: "A319" });
    const baw = res.aircraft[3];
    expect(baw).toMatchObject({ altitude_ft: 2475, speed_kt: 148.2, heading_deg: 269.6, vertical_rate_fpm: -768, direction: "E" });
    expect(baw.distance_nm).toBeCloseTo(6.0, 1);
    expect(res.source).toBe("adsb.lol");
    expect(res.attribution).toContain("ODbL");
    expect(res.positions_at).toBe(new Date(1795256398250).toISOString());
  });

  test("the radius keeps out what the provider sent from further away", async () => {
    const r = await h.call("flights/overhead", { lat: 51.4706, lon: -0.461941, radius: 4 });
    expect(r.body.result.aircraft.map((a: any) => a.callsign)).toEqual(["BAW476", "EZY45TK"]);
  });

  test("near an airport code centres on the airport from the offline dataset", async () => {
    const r = await h.call("flights/overhead", { near: "LHR" });
    expect(r.status).toBe(200);
    expect(r.body.result.center.airport).toMatchObject({ name: "London Heathrow Airport", icao: "EGLL", iata: "LHR" });
    expect(r.body.result.radius_nm).toBe(30);
    expect(adsb.last("/v2/point/51.471/-0.462/30")).toBeDefined();
  });

  test("near a place name goes through the geocoder", async () => {
    const r = await h.call("flights/overhead", { near: "London" });
    expect(r.status).toBe(200);
    expect(nominatim.hits("/search")).toBe(1);
    expect(r.body.result.center.place).toContain("London");
  });

  test("radius over 250 nautical miles, a missing location, and both kinds of location are refused by field", async () => {
    const far = await h.call("flights/overhead", { lat: 51, lon: 0, radius: 251 });
    expect(far.status).toBe(400);
    expect(far.body.error.field).toBe("radius");
    const none = await h.call("flights/overhead", {});
    expect(none.status).toBe(400);
    expect(none.body.error.field).toBe("near");
    const both = await h.call("flights/overhead", { near: "LHR", lat: 51 });
    expect(both.status).toBe(400);
    const half = await h.call("flights/overhead", { lat: 51 });
    expect(half.body.error.field).toBe("lon");
  });

  test("a provider failure is a 503 that says to retry, never a made-up empty sky", async () => {
    adsb.fail = "503";
    try {
      const r = await h.call("flights/overhead", { lat: 10, lon: 10 });
      expect(r.status).toBe(503);
      expect(r.body.error.retry).toBe(true);
    } finally {
      adsb.fail = null;
    }
  });
});

describe("track", () => {
  test("a flight number is looked for under the airline's ICAO callsign", async () => {
    const r = await h.call("flights/track", { flight: "BA117" });
    expect(r.status).toBe(200);
    const res = r.body.result;
    expect(res.status).toBe("in range");
    expect(res.matched).toEqual({ as: "callsign", value: "BAW117" });
    expect(res.aircraft[0]).toMatchObject({ callsign: "BAW117", registration: "G-XWBA", altitude_ft: 38000, speed_kt: 489.6, heading_deg: 288.3 });
    expect(res.aircraft[0].distance_nm).toBeUndefined();
  });

  test("a callsign is asked for as it is", async () => {
    const r = await h.call("flights/track", { flight: "baw117" });
    expect(r.body.result.status).toBe("in range");
  });

  test("an aircraft nobody hears is not in range, and the answer says that is not a cancellation", async () => {
    const before = adsb.seen.length;
    const r = await h.call("flights/track", { flight: "G-EUPT" });
    expect(r.status).toBe(200);
    expect(r.body.result.status).toBe("not in range");
    expect(r.body.result.message).toContain("does not mean the flight is cancelled");
    expect(r.body.result.status).not.toContain("cancel");
    const paths = adsb.seen.slice(before).map((s) => s.path);
    expect(paths).toEqual(["/v2/reg/G-EUPT", "/v2/callsign/GEUPT"]);
  });

  test("something that is no flight designator is refused by field", async () => {
    const r = await h.call("flights/track", { flight: "not a flight!" });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("flight");
  });
});

describe("airport", () => {
  test("traffic at Heathrow sorted into on the ground, approaching, climbing out and passing", async () => {
    const r = await h.call("flights/airport", { code: "EGLL" });
    expect(r.status).toBe(200);
    const res = r.body.result;
    expect(res.airport).toMatchObject({ iata: "LHR", icao: "EGLL", elevation_ft: 83 });
    expect(res.on_ground.map((a: any) => a.callsign)).toEqual(["BAW476"]);
    expect(res.approaching.map((a: any) => a.callsign)).toEqual(["BAW117"]);
    expect(res.climbing_out.map((a: any) => a.callsign)).toEqual(["VIR3"]);
    expect(res.passing.map((a: any) => a.callsign)).toEqual(["EZY45TK"]);
    expect(res.counts).toEqual({ on_ground: 1, approaching: 1, climbing_out: 1, passing: 1 });
    expect(res.note).toContain("not a timetable");
  });

  test("by name", async () => {
    const r = await h.call("flights/airport", { code: "Heathrow" });
    expect(r.body.result.airport.icao).toBe("EGLL");
  });

  test("an unknown airport is a 404 that says what to give", async () => {
    const r = await h.call("flights/airport", { code: "QQQX" });
    expect(r.status).toBe(404);
    expect(r.body.error.message).toContain("IATA");
  });
});
