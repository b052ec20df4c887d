// routes against loopback Nominatim, OSRM (car, foot, bike) and Routes API
// servers replaying payloads in their real formats: every argument rule, the
// requests sent, times and instructions, prices and free cache hits, the 501
// without a provider for transit and traffic, and provider failures.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { settle } from "../../core/upstream/index.ts";
import { startHearth, TestClock } from "../harness.ts";
import { balance, funded } from "../places/credits.ts";
import { json, provider, recorded } from "../places/provider.ts";

const nominatim = provider({
  "/search": (r) => {
    const file = { "King's Cross": "search-king-s-cross.json", "British Museum": "search-british-museum.json", London: "search-london.json" }[r.query.get("q") ?? ""];
    return json(recorded("nominatim", file ?? "search-empty.json"));
  },
});
const osrmAnswer = (profile: string) => (r: { path: string; query: URLSearchParams }) => {
  const m = new RegExp(`^/route/v1/${profile}/`).exec(r.path);
  if (!m) return null;
  const coords = r.path.slice(m[0].length);
  if (coords.endsWith(";0,0")) return json(recorded("osrm", "no-route.json"), 400);
  if (coords.endsWith(";1,1")) return json(recorded("osrm", "invalid-query.json"), 400);
  if (profile === "foot") return json(recorded("osrm", "route-foot.json"));
  if (profile === "bike") return json(recorded("osrm", "route-bike.json"));
  return json(recorded("osrm", r.query.get("steps") === "true" ? "route-car-steps.json" : "route-car.json"));
};
const osrm = provider(osrmAnswer("car"));
const foot = provider(osrmAnswer("foot"));
const bike = provider(osrmAnswer("bike"));
let googleStatus = 200;
const google = provider({
  "/directions/v2:computeRoutes": (r) => {
    if (googleStatus !== 200) return json('{"error":{"code":403,"message":"API key not valid. Please pass a valid API key.","status":"PERMISSION_DENIED"}}', googleStatus);
    const body = JSON.parse(r.body);
    if (body.destination.location.latLng.latitude === 0) return json(recorded("google-routes", "no-route.json"));
    return json(recorded("google-routes", body.travelMode === "TRANSIT" ? "transit.json" : "drive-traffic.json"));
  },
});

const NOW = "2026-11-21T10:00:00.000Z";
const clock = new TestClock(new Date(NOW).getTime());
const common = {
  HEARTH_METER_ACCOUNTS: "all", 
  NOMINATIM_URL: nominatim.url,
  OSRM_URL: osrm.url,
  OSRM_FOOT_URL: foot.url,
  OSRM_BIKE_URL: bike.url,
  OSRM_TIMEOUT_MS: "5000",
  UPSTREAM_RETRY_MS: "1",
  HEARTH_RATE_READS: "0",
  HEARTH_RATE_PRICED: "0",
};
let h: Awaited<ReturnType<typeof startHearth>>;
beforeAll(async () => {
  h = await startHearth({ clock, env: common });
});
afterAll(async () => {
  await settle(h.rt);
  await h.stop();
  for (const p of [nominatim, osrm, foot, bike, google]) p.stop();
});


const KX = { from_lat: 51.5319229, from_lon: -0.1237931 };
const BM = { to_lat: 51.519413, to_lon: -0.126963 };
let spot = 0;
/** A destination a few metres from the museum that no earlier call has cached. */
const freshTo = () => ({ to_lat: BM.to_lat + ++spot / 100_000, to_lon: BM.to_lon });

describe("eta", () => {
  test("a drive between coordinates: OSRM's free-flow time, 2 credits", async () => {
    const token = await funded(h, "ann", 10);
    const me = "ann";
    const r = await h.call("routes/eta", { ...KX, ...BM }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({
      mode: "drive",
      from: { lat: 51.5319229, lon: -0.1237931 },
      to: { lat: 51.519413, lon: -0.126963 },
      distance_m: 1695,
      duration_s: 291,
      duration: "5 min",
      depart_at: NOW,
      arrive_at: "2026-11-21T10:04:51.000Z",
      traffic: false,
    });
    expect(r.body.result.steps).toBeUndefined();
    expect(r.body.result.note).toContain("GOOGLE_ROUTES_KEY");
    expect(r.body.result.sources[0]).toMatchObject({ source: "OSRM", cached: false });
    const sent = osrm.requests.at(-1)!;
    expect(sent.path).toBe("/route/v1/car/-0.12379,51.53192;-0.12696,51.51941");
    expect(sent.query.get("steps")).toBe("false");
    expect(sent.query.get("overview")).toBe("false");
    expect(await balance(h, me)).toBe(8);
  });

  test("the same route again comes from cache, costs nothing, and a stranger may have it", async () => {
    const token = await funded(h, "ben", 10);
    const me = "ben";
    const sent = osrm.requests.length;
    const r = await h.call("routes/eta", { ...KX, ...BM }, { token });
    expect(r.body.result.sources[0].cached).toBe(true);
    expect(osrm.requests.length).toBe(sent);
    expect(await balance(h, me)).toBe(10);
    expect((await h.call("routes/eta", { ...KX, ...BM })).status).toBe(200);
  });

  test("place names are geocoded first", async () => {
    const token = await funded(h, "cat", 10);
    const me = "cat";
    const r = await h.call("routes/eta", { from: "King's Cross", to: "British Museum" }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result.from.place).toStartWith("London King's Cross");
    expect(r.body.result.to.place).toStartWith("British Museum, Great Russell Street");
    expect(nominatim.requests.map((x) => x.query.get("q"))).toEqual(expect.arrayContaining(["King's Cross", "British Museum"]));
  });

  test("walking and cycling ask the foot and bicycle servers", async () => {
    const token = await funded(h, "dan", 10);
    const me = "dan";
    const walk = (await h.call("routes/eta", { ...KX, ...BM, mode: "walk" }, { token })).body.result;
    expect(walk).toMatchObject({ mode: "walk", duration_s: 1108, duration: "18 min", distance_m: 1540 });
    expect(foot.requests.at(-1)!.path).toStartWith("/route/v1/foot/");
    const cycle = (await h.call("routes/eta", { ...KX, ...BM, mode: "cycle" }, { token })).body.result;
    expect(cycle).toMatchObject({ mode: "cycle", duration_s: 422 });
    expect(bike.requests.at(-1)!.path).toStartWith("/route/v1/bike/");
  });

  test("depart_at and arrive_by on foot: when you arrive, when to leave, and when it is too late", async () => {
    const token = await funded(h, "eve", 20);
    const me = "eve";
    const later = (await h.call("routes/eta", { ...KX, ...BM, mode: "walk", depart_at: "2026-11-21T12:00:00Z" }, { token })).body.result;
    expect(later).toMatchObject({ depart_at: "2026-11-21T12:00:00.000Z", arrive_at: "2026-11-21T12:18:28.000Z" });
    const by = (await h.call("routes/eta", { ...KX, ...BM, mode: "walk", arrive_by: "2026-11-21T13:00:00+01:00" }, { token })).body.result;
    expect(by).toMatchObject({ arrive_by: "2026-11-21T12:00:00.000Z", leave_at: "2026-11-21T11:41:32.000Z" });
    expect(by.late).toBeUndefined();
    const tight = (await h.call("routes/eta", { ...KX, ...BM, mode: "walk", arrive_by: "2026-11-21T10:05:00Z" }, { token })).body.result;
    expect(tight).toMatchObject({ late: true, depart_at: NOW, arrive_at: "2026-11-21T10:18:28.000Z" });
  });

  test("transit, and a drive at a given time, need the configured provider: 501 naming it", async () => {
    const token = await funded(h, "fay", 10);
    const me = "fay";
    for (const args of [
      { ...KX, ...BM, mode: "transit" },
      { ...KX, ...BM, depart_at: "2026-11-21T17:30:00Z" },
      { ...KX, ...BM, mode: "drive", arrive_by: "2026-11-21T17:30:00Z" },
    ]) {
      const r = await h.call("routes/eta", args, { token });
      expect(r.status).toBe(501);
      expect(r.body.error.kind).toBe("not_configured");
      expect(r.body.error.message).toContain("GOOGLE_ROUTES_KEY");
    }
    expect(await balance(h, me)).toBe(10);
  });

  test("argument rules", async () => {
    const token = await funded(h, "gus", 10);
    const me = "gus";
    for (const [args, field] of [
      [{ ...KX, ...BM, depart_at: "2026-11-21T12:00:00Z", arrive_by: "2026-11-21T13:00:00Z" }, "arrive_by"],
      [{ ...KX, ...BM, depart_at: "tomorrow" }, "depart_at"],
      [{ ...KX, ...BM, arrive_by: "2026-11-21 13:00" }, "arrive_by"],
      [{ ...KX, ...BM, depart_at: "2026-13-45T10:00:00Z" }, "depart_at"],
      [{ ...BM }, "from"],
      [{ ...KX }, "to"],
      [{ from: "King's Cross", ...KX, ...BM }, "from"],
      [{ from_lat: 51.5, ...BM }, "from_lon"],
      [{ ...KX, to_lon: 0.1 }, "to_lat"],
      [{ ...KX, from_lat: 91, ...BM }, "from_lat"],
      [{ from: "Atlantis", ...BM }, "from"],
      [{ ...KX, to: "" }, "to"],
      [{ ...KX, ...BM, mode: "boat" }, "mode"],
      [{ ...KX, ...BM, via: "Euston" }, "via"],
    ] as const) {
      const r = await h.call("routes/eta", args as Record<string, unknown>, { token });
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe(field);
    }
    expect(await balance(h, me)).toBe(10);
  });

  test("OSRM finding no route is a 404; a request it refuses is a 502", async () => {
    const token = await funded(h, "hal", 10);
    const me = "hal";
    const none = await h.call("routes/eta", { ...KX, to_lat: 0, to_lon: 0 }, { token });
    expect(none.status).toBe(404);
    expect(none.body.error.message).toContain("no route");
    const refused = await h.call("routes/eta", { ...KX, to_lat: 1, to_lon: 1 }, { token });
    expect(refused.status).toBe(502);
    expect(refused.body.error.retry).toBe(true);
    expect(await balance(h, me)).toBe(10);
  });

  test("OSRM failing: 500 and garbage are 502, silence is 504, none charged", async () => {
    const token = await funded(h, "ida", 10);
    const me = "ida";
    for (const [fail, status] of [
      ["500", 502],
      ["garbage", 502],
      ["hang", 504],
    ] as const) {
      osrm.fail = fail;
      const r = await h.call("routes/eta", { ...KX, ...freshTo() }, { token });
      expect(r.status).toBe(status);
      expect(r.body.error.retry).toBe(true);
    }
    osrm.fail = null;
    expect(await balance(h, me)).toBe(10);
  });
});

describe("directions", () => {
  test("instructions with a distance each, 3 credits", async () => {
    const token = await funded(h, "joe", 10);
    const me = "joe";
    const r = await h.call("routes/directions", { ...KX, ...BM }, { token });
    expect(r.status).toBe(200);
    const d = r.body.result;
    expect(osrm.requests.at(-1)!.query.get("steps")).toBe("true");
    expect(d.steps.map((s: { instruction: string }) => s.instruction)).toEqual([
      "Head off on Euston Road (A501)",
      "Turn left onto Woburn Place (A4200)",
      "Continue onto Southampton Row (A4200)",
      "Turn right onto Great Russell Street",
      "Arrive at your destination, on the right",
    ]);
    expect(d.steps.map((s: { distance_m: number }) => s.distance_m)).toEqual([412, 604, 389, 290, 0]);
    expect(d.steps[1]).toMatchObject({ maneuver: { type: "turn", modifier: "left" }, location: { lat: 51.529298, lon: -0.129513 } });
    expect(d).toMatchObject({ distance_m: 1695, duration_s: 291, via: "Woburn Place, Southampton Row" });
    expect(await balance(h, me)).toBe(7);
  });

  test("the same rules as eta", async () => {
    const token = await funded(h, "kim", 10);
    const me = "kim";
    expect((await h.call("routes/directions", { ...KX, ...BM, depart_at: "2026-11-21T12:00:00Z", arrive_by: "2026-11-21T12:30:00Z" }, { token })).body.error.field).toBe("arrive_by");
    expect((await h.call("routes/directions", { ...KX, ...BM, mode: "transit" }, { token })).status).toBe(501);
  });
});

describe("nearest", () => {
  test("orders the destinations by time, the unreachable last, 2 credits each", async () => {
    const token = await funded(h, "lee", 10);
    const me = "lee";
    const r = await h.call("routes/nearest", { from: "King's Cross", to: ["British Museum", "0,0", "51.5194,-0.127"], mode: "walk" }, { token });
    expect(r.status).toBe(200);
    const n = r.body.result;
    expect(n.mode).toBe("walk");
    expect(n.destinations.map((d: { to: string; rank: number }) => [d.rank, d.to])).toEqual([
      [1, "British Museum"],
      [2, "51.5194,-0.127"],
      [3, "0,0"],
    ]);
    expect(n.quickest).toBe("British Museum");
    expect(n.destinations[2]).toMatchObject({ reachable: false, lat: 0, lon: 0 });
    expect(n.destinations[0]).toMatchObject({ reachable: true, duration_s: 1108, place: expect.stringContaining("British Museum") });
    // One lookup per destination.
    expect(foot.requests.filter((x) => x.path.includes(";0,0")).length).toBeGreaterThanOrEqual(1);
    expect(await balance(h, me)).toBe(4);
  });

  test("a single destination with commas in it goes in a POST body", async () => {
    const token = await funded(h, "liv", 10);
    const me = "liv";
    const r = await h.call("routes/nearest", { ...KX, to: ["51.5194,-0.127"] }, { token, method: "POST" });
    expect(r.status).toBe(200);
    expect(r.body.result.destinations).toMatchObject([{ rank: 1, lat: 51.5194, lon: -0.127, reachable: true }]);
    expect(await balance(h, me)).toBe(8);
  });

  test("argument rules", async () => {
    const token = await funded(h, "max", 50);
    const me = "max";
    for (const [args, field, status] of [
      [{ from: "King's Cross", to: [] }, "to", 400],
      [{ from: "King's Cross", to: Array.from({ length: 11 }, (_, i) => `${51 + i / 100},0`) }, "to", 400],
      [{ from: "King's Cross" }, "to", 400],
      [{ to: ["British Museum"] }, "from", 400],
      [{ from: "King's Cross", to: ["British Museum", "Atlantis"] }, "to", 400],
      [{ from: "King's Cross", to: ["95,10"] }, "to", 400],
      [{ from: "King's Cross", to: ["British Museum"], mode: "transit" }, undefined, 501],
    ] as const) {
      const r = await h.call("routes/nearest", args as Record<string, unknown>, { token });
      expect(r.status).toBe(status);
      if (field) expect(r.body.error.field).toBe(field);
    }
    const atlantis = await h.call("routes/nearest", { from: "King's Cross", to: ["British Museum", "Atlantis"] }, { token });
    expect(atlantis.body.error.message).toContain('to[1] "Atlantis"');
  });
});

describe("with a transit and traffic provider configured", () => {
  let g: typeof h;
  beforeAll(async () => {
    g = await startHearth({ clock, env: { ...common, GOOGLE_ROUTES_KEY: "test-key", GOOGLE_ROUTES_URL: google.url } });
  });
  afterAll(async () => {
    await settle(g.rt);
    await g.stop();
  });

  test("a drive at a given time carries the expected traffic", async () => {
    const token = await funded(g, "nia", 10);
    const me = "nia";
    const r = await g.call("routes/eta", { ...KX, ...BM, depart_at: "2026-11-21T17:30:00Z" }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({
      traffic: true,
      duration_s: 512,
      free_flow_s: 398,
      traffic_delay_s: 114,
      distance_m: 1734,
      depart_at: "2026-11-21T17:30:00.000Z",
      arrive_at: "2026-11-21T17:38:32.000Z",
    });
    expect(r.body.result.sources[0].source).toBe("Google Routes");
    const sent = google.requests.at(-1)!;
    expect(sent.method).toBe("POST");
    expect(sent.headers.get("x-goog-api-key")).toBe("test-key");
    expect(sent.headers.get("x-goog-fieldmask")).toContain("routes.duration");
    expect(JSON.parse(sent.body)).toMatchObject({
      travelMode: "DRIVE",
      routingPreference: "TRAFFIC_AWARE",
      departureTime: "2026-11-21T17:30:00.000Z",
      origin: { location: { latLng: { latitude: 51.53192, longitude: -0.12379 } } },
    });
  });

  test("with the provider configured, a drive leaving now is timed in traffic too", async () => {
    const token = await funded(g, "nat", 10);
    const me = "nat";
    const r = await g.call("routes/eta", { ...KX, ...BM }, { token });
    expect(r.body.result).toMatchObject({ traffic: true, duration_s: 512, depart_at: NOW });
    expect(r.body.result.note).toBeUndefined();
    expect(JSON.parse(google.requests.at(-1)!.body).departureTime).toBe(NOW);
    expect(await balance(g, me)).toBe(8);
  });

  test("arrive_by by car: timed from the departure it implies", async () => {
    const token = await funded(g, "oli", 10);
    const me = "oli";
    const before = google.requests.length;
    const r = await g.call("routes/eta", { ...KX, ...BM, arrive_by: "2026-11-21T18:00:00Z" }, { token });
    expect(r.body.result).toMatchObject({ leave_at: "2026-11-21T17:51:28.000Z", arrive_at: "2026-11-21T18:00:00.000Z", traffic: true });
    const asked = google.requests.slice(before).map((x) => JSON.parse(x.body).departureTime);
    expect(asked).toEqual(["2026-11-21T17:00:00.000Z", "2026-11-21T17:51:28.000Z"]);
  });

  test("transit: the journey with its line, stops and times", async () => {
    const token = await funded(g, "pat", 10);
    const me = "pat";
    const r = await g.call("routes/directions", { from: "King's Cross", to: "British Museum", mode: "transit" }, { token });
    expect(r.status).toBe(200);
    const d = r.body.result;
    expect(d).toMatchObject({ mode: "transit", duration_s: 1140, duration: "19 min", traffic: false, arrive_at: "2026-11-21T10:17:00.000Z" });
    expect(d.steps[1]).toMatchObject({
      mode: "transit",
      instruction: "Bus towards Victoria",
      distance_m: 1968,
      transit: { line: "73", vehicle: "bus", headsign: "Victoria", from_stop: "King's Cross Station (Stop B)", to_stop: "Great Russell Street", stops: 6 },
    });
    expect(JSON.parse(google.requests.at(-1)!.body)).toMatchObject({ travelMode: "TRANSIT", departureTime: NOW });
    expect(JSON.parse(google.requests.at(-1)!.body).routingPreference).toBeUndefined();
  });

  test("a departure in the past, no route, and a refused key", async () => {
    const token = await funded(g, "quy", 20);
    const me = "quy";
    const past = await g.call("routes/eta", { ...KX, ...BM, depart_at: "2026-11-21T08:00:00Z" }, { token });
    expect(past.status).toBe(400);
    expect(past.body.error.field).toBe("depart_at");
    const none = await g.call("routes/eta", { ...KX, to_lat: 0, to_lon: 0, mode: "transit" }, { token });
    expect(none.status).toBe(404);
    googleStatus = 403;
    const refused = await g.call("routes/eta", { ...KX, ...freshTo(), mode: "transit" }, { token });
    googleStatus = 200;
    expect(refused.status).toBe(502);
    expect(await balance(g, me)).toBe(20);
  });
});
