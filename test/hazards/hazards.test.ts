import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { settle } from "../../core/upstream/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { json, recorded, startFixture } from "../upstream/fixture-server.ts";

const fixture = startFixture({
  "/earthquakes/feed/v1.0/summary/2.5_day.geojson": () => json(recorded("usgs", "2.5_day.geojson")),
  "/earthquakes/feed/v1.0/summary/4.5_week.geojson": () => json(recorded("usgs", "4.5_week.geojson")),
  "/earthquakes/feed/v1.0/summary/1.0_hour.geojson": () => json(recorded("usgs", "2.5_day.geojson")),
  "/gdacsapi/api/events/geteventlist/EVENTS4APP": () => json(recorded("gdacs", "events4app.json")),
  "/flood-monitoring/id/floods": (q) => json(recorded("environment-agency", q.has("lat") ? "floods-near-malmesbury.json" : "floods.json")),
});

const clock = new TestClock(new Date("2026-11-21T10:00:00Z").getTime());
let h: Hearth;
beforeAll(async () => {
  h = await startHearth({
    clock,
    env: { USGS_URL: fixture.url, GDACS_URL: fixture.url, EA_FLOODS_URL: fixture.url, UPSTREAM_TIMEOUT_MS: "5000", UPSTREAM_RETRY_MS: "1" },
  });
});
afterAll(async () => {
  await settle(h.rt);
  await h.stop();
  fixture.stop();
});

const QUAKES_DAY = "/earthquakes/feed/v1.0/summary/2.5_day.geojson";

describe("quakes", () => {
  test("the day's 2.5+ feed, newest first, with how long ago and the tsunami flag", async () => {
    const r = await h.call("hazards/quakes");
    expect(r.status).toBe(200);
    const q = r.body.result;
    expect(q).toMatchObject({ min: 2.5, period: "day", near: null, count: 5, source: "USGS Earthquake Hazards Program", cached: false });
    expect(q.quakes.map((x: any) => x.magnitude)).toEqual([2.71, 6.4, 3.1, 4.6, 2.5]);
    expect(q.quakes[0]).toMatchObject({
      place: "8 km NW of The Geysers, CA",
      ago: "5 minutes ago",
      minutes_ago: 5,
      depth_km: 2.14,
      tsunami: false,
      time: "2026-11-21T09:54:47.655Z",
    });
    expect(q.quakes[1]).toMatchObject({ id: "us7000r2ab", tsunami: true, alert: "green", felt: 38, ago: "47 minutes ago" });
    expect(q.quakes[4].ago).toBe("21 hours ago");
    expect(fixture.hits(QUAKES_DAY)).toBe(1);
  });

  test("a second call within the minute comes from cache", async () => {
    clock.advance(30_000);
    const r = await h.call("hazards/quakes");
    expect(r.body.result).toMatchObject({ cached: true, age_seconds: 30 });
    expect(fixture.hits(QUAKES_DAY)).toBe(1);
  });

  test("min filters and picks the feed; period picks the window", async () => {
    const three = await h.call("hazards/quakes", { min: 3 });
    expect(three.body.result.quakes.map((x: any) => x.magnitude)).toEqual([6.4, 3.1, 4.6]);
    expect(fixture.hits(QUAKES_DAY)).toBe(1);
    const week = await h.call("hazards/quakes", { min: 5, period: "week" });
    expect(week.status).toBe(200);
    expect(fixture.hits("/earthquakes/feed/v1.0/summary/4.5_week.geojson")).toBe(1);
    expect(week.body.result.quakes.map((x: any) => x.place)).toEqual(["112 km E of Miyako, Japan", "Kermadec Islands region"]);
    expect(week.body.result.quakes[1].ago).toBe("5 days ago");
    const hour = await h.call("hazards/quakes", { min: 1.2, period: "hour" });
    expect(hour.status).toBe(200);
    expect(fixture.hits("/earthquakes/feed/v1.0/summary/1.0_hour.geojson")).toBe(1);
  });

  test("argument rules", async () => {
    for (const [args, field] of [
      [{ min: 11 }, "min"],
      [{ min: -1 }, "min"],
      [{ period: "year" }, "period"],
      [{ lat: 34 }, "lon"],
      [{ lon: -118 }, "lat"],
      [{ within_km: 100 }, "within_km"],
      [{ lat: 34, lon: -118, within_km: 0 }, "within_km"],
      [{ lat: 95, lon: -118 }, "lat"],
    ] as const) {
      const r = await h.call("hazards/quakes", args);
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe(field);
    }
  });

  test("a point keeps quakes within 500 km by default, with their distance", async () => {
    const la = await h.call("hazards/quakes", { lat: 34.05, lon: -118.24 });
    expect(la.body.result.near).toEqual({ lat: 34.05, lon: -118.24, within_km: 500 });
    expect(la.body.result.quakes.map((x: any) => [x.place, x.distance_km])).toEqual([["4 km SSE of Ojai, CA", 99.6]]);
    const wide = await h.call("hazards/quakes", { lat: 34.05, lon: -118.24, within_km: 1000 });
    expect(wide.body.result.quakes.map((x: any) => x.distance_km)).toEqual([670.5, 99.6]);
    const tight = await h.call("hazards/quakes", { lat: 34.05, lon: -118.24, within_km: 50 });
    expect(tight.body.result.count).toBe(0);
  });
});

describe("alerts", () => {
  test("everything by default, red first, one entry per event", async () => {
    const r = await h.call("hazards/alerts");
    expect(r.status).toBe(200);
    const a = r.body.result;
    expect(a.level).toBe("green");
    expect(a.alerts.map((x: any) => [x.type, x.level])).toEqual([
      ["tropical cyclone", "red"],
      ["earthquake", "orange"],
      ["volcano", "orange"],
      ["flood", "green"],
      ["wildfire", "green"],
    ]);
    expect(a.alerts[0]).toMatchObject({
      name: "Tropical Cyclone MAN-YI-26",
      country: "Philippines",
      from: "2026-11-18T06:00:00Z",
      severity: "Super Typhoon (maximum wind speed of 232 km/h)",
      url: "https://www.gdacs.org/report.aspx?eventid=1001342&episodeid=14&eventtype=TC",
    });
    expect(a.alerts[3].severity).toBeNull();
  });

  test("orange keeps orange and red; red keeps red", async () => {
    const orange = await h.call("hazards/alerts", { level: "orange" });
    expect(orange.body.result.alerts.map((x: any) => x.level)).toEqual(["red", "orange", "orange"]);
    const red = await h.call("hazards/alerts", { level: "red" });
    expect(red.body.result.count).toBe(1);
    const bad = await h.call("hazards/alerts", { level: "yellow" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe("level");
  });

  test("a point keeps alerts within 1000 km by default", async () => {
    const manila = await h.call("hazards/alerts", { lat: 14.6, lon: 121 });
    expect(manila.body.result.alerts.map((x: any) => [x.type, x.distance_km])).toEqual([["tropical cyclone", 684.4]]);
    const london = await h.call("hazards/alerts", { lat: 51.5, lon: -0.12 });
    expect(london.body.result.alerts.map((x: any) => x.type)).toEqual(["flood"]);
    const wider = await h.call("hazards/alerts", { lat: 51.5, lon: -0.12, within_km: 2000 });
    expect(wider.body.result.alerts.map((x: any) => x.type)).toEqual(["volcano", "flood"]);
  });
});

describe("floods", () => {
  const PATH = "/flood-monitoring/id/floods";
  test("England-wide, most severe first, lifted warnings left out, and says it covers England only", async () => {
    const r = await h.call("hazards/floods");
    expect(r.status).toBe(200);
    const f = r.body.result;
    expect(f.coverage).toContain("England only");
    expect(f.floods.map((x: any) => [x.area, x.severity])).toEqual([
      ["River Trent at Fiskerton", "severe flood warning"],
      ["Bristol Avon at Malmesbury", "flood warning"],
      ["Upper Bristol Avon area", "flood alert"],
    ]);
    expect(f.floods[0]).toMatchObject({ county: "Nottinghamshire", river_or_sea: "River Trent", tidal: false, raised: "2026-11-21T09:41:02Z" });
    expect(f.attribution).toContain("Environment Agency");
    expect(fixture.last(PATH)!.query.get("min-severity")).toBe("3");
  });

  test("severe keeps warnings and severe warnings only", async () => {
    const r = await h.call("hazards/floods", { severe: true });
    expect(r.body.result.floods.map((x: any) => x.level)).toEqual([1, 2]);
    expect(fixture.last(PATH)!.query.get("min-severity")).toBe("2");
  });

  test("a point asks the API for areas within 30 km by default", async () => {
    const r = await h.call("hazards/floods", { lat: 51.58, lon: -2.1 });
    expect(r.body.result.floods.map((x: any) => x.area)).toEqual(["Bristol Avon at Malmesbury", "Upper Bristol Avon area"]);
    const q = fixture.last(PATH)!.query;
    expect([q.get("lat"), q.get("long"), q.get("dist")]).toEqual(["51.58", "-2.1", "30"]);
    await h.call("hazards/floods", { lat: 51.58, lon: -2.1, within_km: 5 });
    expect(fixture.last(PATH)!.query.get("dist")).toBe("5");
    const before = fixture.hits(PATH);
    const paris = await h.call("hazards/floods", { lat: 48.85, lon: 2.35 });
    expect(paris.body.result).toMatchObject({ count: 0, floods: [] });
    expect(paris.body.result.note).toContain("km from England");
    expect(fixture.hits(PATH)).toBe(before);
    const channel = await h.call("hazards/floods", { lat: 50.3, lon: -1.2, within_km: 60 });
    expect(channel.body.result.note).toBeUndefined();
    expect(fixture.hits(PATH)).toBe(before + 1);
    const half = await h.call("hazards/floods", { lat: 51.58 });
    expect(half.body.error.field).toBe("lon");
  });
});

describe("when a provider fails", () => {
  test("500 and garbage are 502s, silence a 504, and a held copy answers stale", async () => {
    fixture.fail = "500";
    expect((await h.call("hazards/quakes", { period: "month" })).status).toBe(502);
    fixture.fail = "garbage";
    expect((await h.call("hazards/quakes", { period: "month" })).status).toBe(502);
    fixture.fail = "hang";
    expect((await h.call("hazards/quakes", { period: "month" })).status).toBe(504);
    // The day feed was fetched at 10:00; an hour on, USGS is down: the old copy answers.
    clock.advance(3600_000);
    fixture.fail = "500";
    const stale = await h.call("hazards/quakes");
    fixture.fail = null;
    expect(stale.status).toBe(200);
    expect(stale.body.result).toMatchObject({ stale: true, count: 5 });
    expect(stale.body.result.quakes[0].ago).toBe("1 hour ago");
  });
});
