import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { settle } from "../../core/upstream/index.ts";
import { importsUnderWay } from "../../plugins/transit/carried.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { json, recorded, startFixture } from "../upstream/fixture-server.ts";
import { oldTownFeed, oxfordFeed } from "./gtfs.ts";

const oxford = oxfordFeed();
const oldTown = oldTownFeed();
const OXFORD_ETAG = `"${new Bun.CryptoHasher("sha256").update(oxford).digest("hex").slice(0, 16)}"`;
const zip = (bytes: Uint8Array, etag?: string) =>
  new Response(new Uint8Array(bytes), { headers: { "content-type": "application/zip", ...(etag ? { etag, "last-modified": "Mon, 02 Nov 2026 03:00:00 GMT" } : {}) } });

const fx = startFixture({
  // TfL
  "/StopPoint/*": (q, req) => {
    const path = decodeURIComponent(new URL(req.url).pathname);
    if (path === "/StopPoint/Search/Oxford Circus") return json(recorded("tfl", "search-oxford-circus.json"));
    if (path.startsWith("/StopPoint/Search/")) return json(recorded("tfl", "search-empty.json"));
    if (path === "/StopPoint/940GZZLUOXC/Arrivals") return json(recorded("tfl", "arrivals-oxford-circus.json"));
    if (path.endsWith("/Arrivals")) return json(recorded("tfl", "stop-not-recognised.json"), 404);
    return new Response("not found", { status: 404 });
  },
  "/StopPoint": () => json(recorded("tfl", "stoppoints-trafalgar.json")),
  "/Line/Mode/*": () => json(recorded("tfl", "line-status.json")),
  // National Rail
  "/LDBWS/api/20220120/GetDepartureBoard/KGX": (_q, req) =>
    req.headers.get("x-apikey") === "rdm-key" ? json(recorded("ldbws", "departures-kgx.json")) : new Response('{"fault":"Invalid ApiKey"}', { status: 401 }),
  "/LDBWS/api/20220120/GetArrivalBoard/KGX": () => json(recorded("ldbws", "arrivals-kgx.json")),
  // Bus Open Data Service
  "/api/v1/datafeed/": (q) =>
    q.get("api_key") === "bods-key"
      ? new Response(recorded("bods", "datafeed-leeds.xml"), { headers: { "content-type": "text/xml" } })
      : new Response("Invalid API key", { status: 401 }),
  // Timetables and the catalogue
  "/gtfs/oxford.zip": (_q, req) => (req.headers.get("if-none-match") === OXFORD_ETAG ? new Response(null, { status: 304 }) : zip(oxford, OXFORD_ETAG)),
  "/gtfs/oldtown.zip": () => zip(oldTown),
  // A publisher that moved its archive and now answers with a web page.
  "/gtfs/moved.zip": () => new Response("<html><body>This page has moved</body></html>", { headers: { "content-type": "text/html" } }),
  "/latest/*": (_q, req) => new Response(new Uint8Array(new URL(req.url).pathname.includes("2015") ? 4_821_355 : 1_024), { headers: { "content-type": "application/zip" } }),
  "/feeds_v2.csv": () => new Response(recorded("mobility-database", "feeds_v2.csv").replaceAll("FIXTURE", fx.url), { headers: { "content-type": "text/csv" } }),
});

const clock = new TestClock(new Date("2026-11-21T10:00:00Z").getTime());
const base = {
  TFL_URL: fx.url,
  LDBWS_URL: fx.url,
  BODS_URL: fx.url,
  MOBILITY_DATABASE_URL: fx.url,
  UPSTREAM_TIMEOUT_MS: "5000",
  UPSTREAM_RETRY_MS: "1",
};
let h: Hearth;
beforeAll(async () => {
  h = await startHearth({
    clock,
    env: { ...base, TRANSIT_FEEDS: `oxford=${fx.url}/gtfs/oxford.zip, ${fx.url}/gtfs/oldtown.zip\nmoved=${fx.url}/gtfs/moved.zip ftp://files.example.org/gtfs.zip`, LDBWS_TOKEN: "rdm-key", BODS_API_KEY: "bods-key" },
  });
});
afterAll(async () => {
  await settle(h.rt);
  await h.stop();
  fx.stop();
});

describe("arrivals in London, live from TfL", () => {
  test("by name: the stop is found, then its predictions come soonest first", async () => {
    const r = await h.call("transit/arrivals", { stop: "Oxford Circus" });
    expect(r.status).toBe(200);
    const res = r.body.result;
    expect(res.live).toBe(true);
    expect(res.stop.id).toBe("940GZZLUOXC");
    expect(res.arrivals.map((a: any) => a.line)).toEqual(["Central", "Victoria", "Bakerloo"]);
    expect(res.arrivals[0]).toMatchObject({ destination: "Epping Underground Station", platform: "Eastbound - Platform 2", minutes: 1, expected: "2026-11-21T10:00:30.000Z" });
    expect(res.source).toBe("Transport for London Unified API");
    expect(res.attribution).toBe("Powered by TfL Open Data");
  });

  test("by NaPTAN id straight to the predictions", async () => {
    const before = fx.hits("/StopPoint/Search/Oxford%20Circus");
    const r = await h.call("transit/arrivals", { stop: "940GZZLUOXC" });
    expect(r.body.result.count).toBe(3);
    expect(fx.hits("/StopPoint/Search/Oxford%20Circus")).toBe(before);
  });

  test("a stop TfL does not recognise is a 404 with TfL's words", async () => {
    const r = await h.call("transit/arrivals", { stop: "940GZZLUXYZ" });
    expect(r.status).toBe(404);
    expect(r.body.error.message).toContain("not recognised");
  });

  test("a name nobody knows is a 404", async () => {
    const r = await h.call("transit/arrivals", { stop: "Nowhere Junction" });
    expect(r.status).toBe(404);
  });
});

describe("arrivals elsewhere, from the imported timetable", () => {
  test("a stop by name: only today's services, exceptions applied, and the answer says it is the timetable", async () => {
    const r = await h.call("transit/arrivals", { stop: "Gloucester Green" });
    expect(r.status).toBe(200);
    const res = r.body.result;
    expect(res.live).toBe(false);
    expect(res.timetable).toBe(true);
    expect(res.note).toContain("published timetable");
    expect(res.note).toContain("not live");
    // Saturday 21 November at 10:00 in Oxford: no weekday 10:05, the 10:30 is withdrawn that day, the 10:20 is added.
    expect(res.arrivals.map((a: any) => [a.line, a.scheduled, a.destination])).toEqual([
      ["1", "2026-11-21T10:10:00.000Z", "Blackbird Leys"],
      ["X90", "2026-11-21T10:20:00.000Z", "London Victoria"],
      ["1", "2026-11-21T10:40:00.000Z", "Blackbird Leys"],
    ]);
    expect(res.arrivals[0].minutes).toBe(10);
    expect(res.feed).toMatchObject({ id: "oxford", name: "Oxford Bus Company", valid_to: "2027-01-31", expired: false });
  });

  test("a station by name covers the stops inside it", async () => {
    const r = await h.call("transit/arrivals", { stop: "Oxford Station" });
    expect(r.body.result.arrivals.map((a: any) => a.scheduled)).toEqual(["2026-11-21T10:05:00.000Z", "2026-11-21T10:35:00.000Z"]);
  });

  test("by the timetable's stop id or code, and by part of a name", async () => {
    const byId = await h.call("transit/arrivals", { stop: "340001903OUT" });
    expect(byId.body.result.stop.name).toBe("High Street, Queen's College");
    const byCode = await h.call("transit/arrivals", { stop: "oxfamjtp" });
    expect(byCode.body.result.stop.id).toBe("340001903OUT");
    const part = await h.call("transit/arrivals", { stop: "Queen's College" });
    expect(part.body.result.arrivals.map((a: any) => a.destination)).toEqual(["Blackbird Leys", "London", "Blackbird Leys"]);
  });

  test("after midnight, the previous service day's late trips are still due", async () => {
    clock.set("2026-11-22T00:30:00Z");
    try {
      const r = await h.call("transit/arrivals", { stop: "Gloucester Green" });
      expect(r.body.result.arrivals).toEqual([
        { line: "1", line_name: "Oxford Station - Cowley - Blackbird Leys", destination: "Cowley", stop_id: "340000006G3", scheduled: "2026-11-22T00:50:00.000Z", minutes: 20 },
      ]);
    } finally {
      clock.set("2026-11-21T10:00:00Z");
    }
  });

  test("a stop id repeated in a timetable's file is one stop, its later row", async () => {
    const r = await h.call("transit/arrivals", { stop: "QY" });
    expect(r.status).toBe(200);
    expect(r.body.result.stop).toMatchObject({ id: "QY", name: "Quayside", lat: 52.0031, lon: -1.0049 });
    expect((await h.call("transit/nearby", { lat: 52.0031, lon: -1.0049, radius: 50 })).body.result.stops.map((s: any) => [s.id, s.name])).toEqual([["QY", "Quayside"]]);
  });

  test("a stop's whole name finds it in any case", async () => {
    const r = await h.call("transit/arrivals", { stop: "GLOUCESTER green" });
    expect(r.status).toBe(200);
    expect(r.body.result.stop).toMatchObject({ id: "340000006G3", name: "Gloucester Green" });
  });

  test("a timetable that has ended is named as expired", async () => {
    const r = await h.call("transit/arrivals", { stop: "Market Cross" });
    expect(r.body.result.arrivals).toEqual([]);
    expect(r.body.result.note).toContain("ended on 2026-03-01");
    expect(r.body.result.feed.expired).toBe(true);
  });
});

describe("status", () => {
  test("lines with problems and why, and the rest in good service", async () => {
    const r = await h.call("transit/status", {});
    expect(r.status).toBe(200);
    const res = r.body.result;
    expect(fx.last("/Line/Mode/tube,dlr,overground,elizabeth-line,tram/Status")).toBeDefined();
    expect(res.disrupted.map((d: any) => [d.line, d.status])).toEqual([
      ["Central", "Minor Delays"],
      ["Elizabeth line", "Part Suspended"],
    ]);
    expect(res.disrupted[1].reasons[0]).toContain("Abbey Wood and Whitechapel");
    expect(res.good_service).toEqual(["Victoria", "DLR"]);
    expect(res.summary).toContain("2 of 4 lines");
  });

  test("modes narrow the question; an unknown mode is refused by field", async () => {
    await h.call("transit/status", { modes: "tube, dlr" });
    expect(fx.last("/Line/Mode/tube,dlr/Status")).toBeDefined();
    const bad = await h.call("transit/status", { modes: "tube,bus" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe("modes");
  });
});

describe("nearby", () => {
  test("in London from TfL, nearest first, with ids", async () => {
    const r = await h.call("transit/nearby", { lat: 51.508, lon: -0.128 });
    expect(r.status).toBe(200);
    expect(fx.last("/StopPoint")!.query.get("radius")).toBe("400");
    expect(r.body.result.stops.map((s: any) => [s.id, s.distance_m])).toEqual([
      ["490000235Z", 43],
      ["940GZZLUCHX", 156],
    ]);
    expect(r.body.result.stops[0]).toMatchObject({ name: "Trafalgar Square", indicator: "Stop S", lines: ["24", "88"] });
  });

  test("elsewhere from the carried timetables, within the radius", async () => {
    const r = await h.call("transit/nearby", { lat: 51.7537, lon: -1.2695, radius: 500 });
    const ids = r.body.result.stops.map((s: any) => s.id);
    // The station's own point is nearest, then its two stops.
    expect(ids.slice(0, 3)).toEqual(["OXFSTN", "340000004R2", "340000004R1"]);
    expect(ids).toContain("340000006G3");
    expect(ids).not.toContain("340001903OUT");
    expect(r.body.result.stops[0].feed).toBe("oxford");
  });

  test("radius over 2000 m is refused", async () => {
    const r = await h.call("transit/nearby", { lat: 51.5, lon: -0.1, radius: 2001 });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("radius");
  });
});

describe("feeds", () => {
  test("carried timetables with sizes and validity, the expired one named", async () => {
    const r = await h.call("transit/feeds", {});
    expect(r.status).toBe(200);
    const res = r.body.result;
    expect(res.carried).toHaveLength(3);
    expect(res.carried[0]).toMatchObject({ id: "oxford", name: "Oxford Bus Company", state: "ready", size_bytes: oxford.length, valid_from: "2026-09-01", valid_to: "2027-01-31", expired: false, stops: 5, trips: 6 });
    expect(res.carried[1]).toMatchObject({ name: "Old Town Trams", expired: true, valid_to: "2026-03-01" });
    expect(res.expired).toEqual([{ id: res.carried[1].id, name: "Old Town Trams", ended: "2026-03-01" }]);
    expect(res.available_note).toContain("country");
    // One archive that cannot be read is reported, and the others still answer.
    expect(res.carried[2]).toMatchObject({ id: "moved", state: "failed", stops: null });
    expect(res.carried[2].error).toContain("zip");
    expect(res.unusable_settings).toEqual(['TRANSIT_FEEDS entry "ftp://files.example.org/gtfs.zip" is not an http(s) URL and is ignored']);
  });

  test("for a country, what the catalogue lists that could be carried, with sizes, keyless GTFS only", async () => {
    const r = await h.call("transit/feeds", { country: "gb" });
    const res = r.body.result;
    expect(res.country).toBe("GB");
    expect(res.available.map((a: any) => a.id)).toEqual(["mdb-2014", "mdb-2015", "mdb-1302"]);
    expect(res.expired_available).toEqual([{ id: "mdb-1302", provider: "Cardiff Bus", name: null }]);
    expect(res.available[0]).toMatchObject({ provider: "Oxford Bus Company", place: "Oxford, England", size_bytes: 1024, carried: true });
    expect(res.available[1]).toMatchObject({ provider: "Lothian Buses, Edinburgh Trams", size_bytes: 4_821_355, carried: false });
    expect(fx.seen.filter((s) => s.path.startsWith("/latest/")).length).toBe(3);
    // Sizes are remembered: a second listing asks nobody.
    await h.call("transit/feeds", { country: "GB" });
    expect(fx.seen.filter((s) => s.path.startsWith("/latest/")).length).toBe(3);
  });

  test("a country that is not a two-letter code is refused by field", async () => {
    const r = await h.call("transit/feeds", { country: "GBR" });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("country");
  });

  test("a week on, the archive is asked for again conditionally and an unchanged one is not re-imported", async () => {
    const before = fx.hits("/gtfs/oxford.zip");
    clock.advance(8 * 86_400_000);
    try {
      // The stale feed still answers at once; its refresh runs behind the answer.
      await h.call("transit/feeds", {});
      await Promise.all(importsUnderWay());
      expect(fx.hits("/gtfs/oxford.zip")).toBe(before + 1);
      expect(fx.last("/gtfs/oxford.zip")!.headers.get("if-none-match")).toBe(OXFORD_ETAG);
      const r = await h.call("transit/feeds", {});
      expect(r.body.result.carried[0].imported_at).toBe("2026-11-21T10:00:00.000Z");
    } finally {
      clock.set("2026-11-21T10:00:00Z");
    }
  });
});

describe("trains", () => {
  test("the departure board: times, platforms, operators, cancellations and messages", async () => {
    const r = await h.call("transit/trains", { station: "kgx", rows: 3 });
    expect(r.status).toBe(200);
    expect(fx.last("/LDBWS/api/20220120/GetDepartureBoard/KGX")!.query.get("numRows")).toBe("3");
    const res = r.body.result;
    expect(res).toMatchObject({ station: "London Kings Cross", crs: "KGX", board: "departures", count: 3 });
    expect(res.services[0]).toMatchObject({ scheduled: "10:00", expected: "On time", platform: "4", operator: "London North Eastern Railway", destination: "Edinburgh", via: "via York", cancelled: false });
    expect(res.services[1]).toMatchObject({ expected: "10:12", reason: "This train has been delayed by a points failure near Finsbury Park" });
    expect(res.services[2]).toMatchObject({ cancelled: true, platform: null, reason: "This train has been cancelled because of a shortage of train crew" });
    expect(res.messages).toEqual(["Disruption between Peterborough and Stevenage is expected until 12:00. Latest Travel News"]);
    expect(res.attribution).toBe("Powered by National Rail Enquiries");
  });

  test("the arrivals board", async () => {
    const r = await h.call("transit/trains", { station: "KGX", arrivals: true });
    expect(r.body.result.services[0]).toMatchObject({ scheduled: "10:03", expected: "10:05", origin: "Leeds" });
    expect(fx.last("/LDBWS/api/20220120/GetArrivalBoard/KGX")!.query.get("numRows")).toBe("10");
  });

  test("rows out of 1 to 20 and a station that is no code are refused by field", async () => {
    expect((await h.call("transit/trains", { station: "KGX", rows: 21 })).body.error.field).toBe("rows");
    expect((await h.call("transit/trains", { station: "Kings Cross" })).body.error.field).toBe("station");
  });
});

describe("buses", () => {
  test("live positions near a point, nearest first, stale and distant ones left out", async () => {
    const r = await h.call("transit/buses", { lat: 53.796, lon: -1.5479, within_km: 2 });
    expect(r.status).toBe(200);
    const sent = fx.last("/api/v1/datafeed/")!;
    const [minLon, minLat, maxLon, maxLat] = sent.query.get("boundingBox")!.split(",").map(Number);
    expect(minLon).toBeLessThan(-1.5479);
    expect(maxLon).toBeGreaterThan(-1.5479);
    expect(minLat).toBeLessThan(53.796);
    expect(maxLat).toBeGreaterThan(53.796);
    const res = r.body.result;
    expect(res.buses.map((b: any) => b.line)).toEqual(["1", "36"]);
    expect(res.buses[0]).toMatchObject({ operator: "FLDS", destination: "Beeston", origin: "Holt Park", heading: "S", bearing_deg: 190, age_s: 2 });
    expect(res.buses[1]).toMatchObject({ destination: "Ripon Bus Station", heading: "N", vehicle: "3604" });
    expect(res.note).toContain("not a prediction");
  });

  test("limit keeps the nearest; within_km over 25 is refused", async () => {
    const r = await h.call("transit/buses", { lat: 53.796, lon: -1.5479, within_km: 10, limit: 1 });
    expect(r.body.result.count).toBe(3);
    expect(r.body.result.buses.map((b: any) => b.line)).toEqual(["1"]);
    const far = await h.call("transit/buses", { lat: 53.796, lon: -1.5479, within_km: 26 });
    expect(far.body.error.field).toBe("within_km");
  });
});

describe("instances sharing one database", () => {
  test("asked at once, two instances import a timetable once: the second leaves it to the first, and no stop time is written twice", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-transit-"));
    const env = { ...base, TRANSIT_FEEDS: `oxford=${fx.url}/gtfs/oxford.zip` };
    const a = await startHearth({ clock, dataDir: dir, env });
    const b = await startHearth({ clock, dataDir: dir, env });
    try {
      const [ra, rb] = await Promise.all([a.call("transit/arrivals", { stop: "Gloucester Green" }), b.call("transit/arrivals", { stop: "Gloucester Green" })]);
      await Promise.all(importsUnderWay());
      expect([ra.status, rb.status]).toEqual([200, 200]);
      const once = await h.rows<{ n: number }>("SELECT count(*) AS n FROM transit_times WHERE feed = 'oxford'");
      const both = await a.rows<{ n: number }>("SELECT count(*) AS n FROM transit_times WHERE feed = 'oxford'");
      expect(Number(both[0].n)).toBe(Number(once[0].n));
      expect((await b.call("transit/arrivals", { stop: "Gloucester Green" })).body.result.stop.id).toBe("340000006G3");
    } finally {
      await a.stop();
      await b.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("with keys the providers refuse", () => {
  test("the refusal names the key to check", async () => {
    const wrong = await startHearth({ clock, env: { ...base, LDBWS_TOKEN: "stale", BODS_API_KEY: "stale" } });
    try {
      const t = await wrong.call("transit/trains", { station: "KGX" });
      expect(t.status).toBe(502);
      expect(t.body.error.message).toContain("LDBWS_TOKEN");
      const b = await wrong.call("transit/buses", { lat: 53.8, lon: -1.55 });
      expect(b.status).toBe(502);
      expect(b.body.error.message).toContain("BODS_API_KEY");
    } finally {
      await wrong.stop();
    }
  });
});

describe("when TfL fails", () => {
  test("unreachable is a 503 and garbage a 502, both retryable", async () => {
    fx.fail = "503";
    try {
      const r = await h.call("transit/status", { modes: "tram" });
      expect(r.status).toBe(503);
      expect(r.body.error.retry).toBe(true);
    } finally {
      fx.fail = null;
    }
    fx.fail = "garbage";
    try {
      const r = await h.call("transit/arrivals", { stop: "940GZZLUBST" });
      expect(r.status).toBe(502);
    } finally {
      fx.fail = null;
    }
  });
});

describe("without keys", () => {
  test("trains and buses answer 501 naming the variable to set; nothing is asked of the providers", async () => {
    const bare = await startHearth({ clock, env: base });
    try {
      const before = fx.seen.length;
      const t = await bare.call("transit/trains", { station: "KGX" });
      expect(t.status).toBe(501);
      expect(t.body.error.message).toContain("LDBWS_TOKEN");
      const b = await bare.call("transit/buses", { lat: 53.8, lon: -1.55 });
      expect(b.status).toBe(501);
      expect(b.body.error.message).toContain("BODS_API_KEY");
      const f = await bare.call("transit/feeds", {});
      expect(f.body.result.note).toContain("TRANSIT_FEEDS");
      expect(fx.seen.length).toBe(before);
    } finally {
      await bare.stop();
    }
  });
});
