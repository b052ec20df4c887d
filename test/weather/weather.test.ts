import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { grantCredits } from "../../core/pay/grant.ts";
import { balanceOf } from "../../core/pay/ledger.ts";
import { settle } from "../../core/upstream/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { json, recorded, startFixture } from "../upstream/fixture-server.ts";
import { sqlAll, sqlGet } from "../sql.ts";

const om = (file: string) => recorded("open-meteo", file);
const fixture = startFixture({
  "/v1/forecast": () => json(om("forecast.json")),
  "/v1/air-quality": (q) => json(om(q.get("latitude") === "40.7" ? "air-quality-no-pollen.json" : "air-quality.json")),
  "/v1/marine": (q) => json(om(q.get("latitude") === "48.13" ? "marine-inland.json" : "marine.json")),
  "/v1/archive": (q) => (q.get("end_date")! > "2026-11-19" ? json(om("archive-out-of-range.json"), 400) : json(om("archive.json"))),
});

const clock = new TestClock(new Date("2026-11-21T10:00:00Z").getTime());
let h: Hearth;
let token: string;
beforeAll(async () => {
  h = await startHearth({
    clock,
    env: {
      HEARTH_METER_ACCOUNTS: "all", 
      OPEN_METEO_URL: fixture.url,
      OPEN_METEO_AIR_URL: fixture.url,
      OPEN_METEO_MARINE_URL: fixture.url,
      OPEN_METEO_ARCHIVE_URL: `${fixture.url}/`,
      UPSTREAM_TIMEOUT_MS: "5000",
      UPSTREAM_RETRY_MS: "1",
    },
  });
  token = await h.token("wendy");
  await h.rt.store.write(() => grantCredits(h.rt.store.wdb, { username: "wendy", amount: 10, by: "test", at: clock.now().getTime() }));
});

const balance = async () => balanceOf(h.rt.store.rdb, ((await sqlGet(h.rt, "SELECT id FROM accounts WHERE username = 'wendy'")) as { id: string }).id);
afterAll(async () => {
  await settle(h.rt);
  await h.stop();
  fixture.stop();
});

describe("forecast", () => {
  test("current conditions and seven days, with where and when it came from", async () => {
    const r = await h.call("weather/forecast", { lat: 51.5012, lon: -0.1246 }, { token });
    expect(r.status).toBe(200);
    expect(await balance()).toBe(9);
    const f = r.body.result;
    expect(f.location).toEqual({ lat: 51.5, lon: -0.120000124, timezone: "Europe/London", elevation_m: 23 });
    expect(f.current).toMatchObject({ conditions: "overcast", temperature_c: 6.4, feels_like_c: 2.9, wind_kmh: 14.8, gusts_kmh: 31.3, daylight: true });
    expect(f.days).toHaveLength(7);
    expect(f.days[1]).toMatchObject({
      date: "2026-11-22",
      conditions: "slight rain",
      high_c: 10.4,
      low_c: 5.2,
      precipitation_mm: 4.2,
      precipitation_chance_pct: 86,
    });
    expect(f).toMatchObject({ source: "Open-Meteo", as_of: "2026-11-21T10:00:00.000Z", age_seconds: 0, cached: false });
    expect(f.attribution).toContain("CC BY 4.0");
    const q = fixture.last("/v1/forecast")!.query;
    expect(q.get("latitude")).toBe("51.5");
    expect(q.get("longitude")).toBe("-0.12");
    expect(q.get("timezone")).toBe("auto");
    expect(q.get("forecast_days")).toBe("7");
    expect(q.get("daily")).toContain("temperature_2m_max");
    expect(fixture.last("/v1/forecast")!.headers.get("user-agent")).toStartWith("Hearth/");
  });

  test("a cached forecast is not charged and does not reach the provider again", async () => {
    const before = fixture.hits("/v1/forecast");
    clock.advance(10 * 60_000);
    // Without a token: a priced call would be refused, a cached one is free.
    const r = await h.call("weather/forecast", { lat: 51.5012, lon: -0.1246 });
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({ cached: true, age_seconds: 600 });
    expect(fixture.hits("/v1/forecast")).toBe(before);
    // With a token: nothing is taken from the balance.
    const mine = await h.call("weather/forecast", { lat: 51.5012, lon: -0.1246 }, { token });
    expect(mine.body.result.cached).toBe(true);
    expect(await balance()).toBe(9);
    // A point not yet fetched costs a credit: a stranger is refused.
    const stranger = await h.call("weather/forecast", { lat: 10, lon: 10 });
    expect([401, 402]).toContain(stranger.status);
    expect(fixture.hits("/v1/forecast")).toBe(before);
  });

  test("lat and lon must be on the globe and present", async () => {
    const far = await h.call("weather/forecast", { lat: 91, lon: 0 }, { token });
    expect(far.status).toBe(400);
    expect(far.body.error.field).toBe("lat");
    const west = await h.call("weather/forecast", { lat: 0, lon: -181 }, { token });
    expect(west.body.error.field).toBe("lon");
    const none = await h.call("weather/forecast", { lat: 0 }, { token });
    expect(none.status).toBe(400);
    expect(none.body.error.field).toBe("lon");
  });
});

describe("air", () => {
  test("AQI, particles and gases, with pollen where it is counted", async () => {
    const r = await h.call("weather/air", { lat: 52.55, lon: 13.45 });
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({
      european_aqi: 34,
      european_aqi_band: "fair",
      us_aqi: 52,
      us_aqi_band: "moderate",
      pm2_5: 12.7,
      pm10: 17.3,
      ozone: 38,
      nitrogen_dioxide: 21.4,
      uv_index: 0.65,
      pollen: { alder: 0.3, birch: 0, grass: 0.1, mugwort: 0, olive: 0, ragweed: 0 },
    });
    expect(fixture.last("/v1/air-quality")!.query.get("current")).toContain("birch_pollen");
  });

  test("no pollen field where pollen is not modelled", async () => {
    const r = await h.call("weather/air", { lat: 40.7, lon: -74 });
    expect(r.status).toBe(200);
    expect(r.body.result.european_aqi).toBe(41);
    expect("pollen" in r.body.result).toBe(false);
  });
});

describe("marine", () => {
  test("days defaults to 3 and bounds 1 to 7", async () => {
    const r = await h.call("weather/marine", { lat: 54.54, lon: 10.71 });
    expect(r.status).toBe(200);
    expect(fixture.last("/v1/marine")!.query.get("forecast_days")).toBe("3");
    expect(r.body.result.now).toMatchObject({ wave_height_m: 0.84, wave_period_s: 3.7, wave_direction_deg: 251, sea_temperature_c: 8.9 });
    expect(r.body.result.days).toHaveLength(3);
    expect(r.body.result.days[1]).toMatchObject({ date: "2026-11-22", wave_height_max_m: 1.46 });
    for (const days of [0, 8, 2.5]) {
      const bad = await h.call("weather/marine", { lat: 54.54, lon: 10.71, days });
      expect(bad.status).toBe(400);
      expect(bad.body.error.field).toBe("days");
    }
    const five = await h.call("weather/marine", { lat: 54.54, lon: 10.71, days: 5 });
    expect(five.status).toBe(200);
    expect(fixture.last("/v1/marine")!.query.get("forecast_days")).toBe("5");
  });

  test("an inland point says there is no sea state rather than zero waves", async () => {
    const r = await h.call("weather/marine", { lat: 48.13, lon: 11.54 });
    expect(r.status).toBe(200);
    expect(r.body.result.now.wave_height_m).toBeNull();
    expect(r.body.result.note).toContain("no sea state");
  });
});

describe("history", () => {
  test("averages, total rainfall and extremes over the range", async () => {
    const r = await h.call("weather/history", { lat: 51.49, lon: -0.16, start: "2026-06-01", end: "2026-06-07" });
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({
      start: "2026-06-01",
      end: "2026-06-07",
      days: 7,
      average_high_c: 22.2,
      average_low_c: 12.5,
      total_rainfall_mm: 19.7,
      extremes: { hottest_day: { date: "2026-06-06", c: 26.1 }, coldest_day: { date: "2026-06-04", c: 10.4 }, wettest_day: { date: "2026-06-04", mm: 11.8 } },
    });
    const q = fixture.last("/v1/archive")!.query;
    expect([q.get("start_date"), q.get("end_date")]).toEqual(["2026-06-01", "2026-06-07"]);
  });

  test("a settled past range is kept for good", async () => {
    const before = fixture.hits("/v1/archive");
    clock.advance(400 * 86_400_000);
    const r = await h.call("weather/history", { lat: 51.49, lon: -0.16, start: "2026-06-01", end: "2026-06-07" });
    expect(r.body.result.cached).toBe(true);
    expect(fixture.hits("/v1/archive")).toBe(before);
    clock.set("2026-11-21T10:00:00Z");
  });

  test("end before start, impossible days and days before 1940 are refused", async () => {
    const back = await h.call("weather/history", { lat: 51.49, lon: -0.16, start: "2026-06-07", end: "2026-06-01" });
    expect(back.status).toBe(400);
    expect(back.body.error.field).toBe("end");
    const feb = await h.call("weather/history", { lat: 51.49, lon: -0.16, start: "2026-02-30", end: "2026-03-02" });
    expect(feb.body.error.field).toBe("start");
    const old = await h.call("weather/history", { lat: 51.49, lon: -0.16, start: "1939-12-31", end: "1940-01-02" });
    expect(old.body.error.field).toBe("start");
    const shape = await h.call("weather/history", { lat: 51.49, lon: -0.16, start: "yesterday", end: "2026-03-02" });
    expect(shape.body.error.field).toBe("start");
  });

  test("a range past the archive's end says the latest available day", async () => {
    const r = await h.call("weather/history", { lat: 51.49, lon: -0.16, start: "2026-11-10", end: "2026-11-21" });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("end");
    expect(r.body.error.message).toContain("latest available day is 2026-11-19");
  });
});

describe("when Open-Meteo fails", () => {
  test("HTTP 500 is a 502, garbage is a 502, silence is a 504", async () => {
    fixture.fail = "500";
    const a = await h.call("weather/air", { lat: 1, lon: 1 });
    expect(a.status).toBe(502);
    expect(a.body.error).toMatchObject({ kind: "upstream_failed", retry: true });
    fixture.fail = "garbage";
    const b = await h.call("weather/air", { lat: 1, lon: 1 });
    expect(b.status).toBe(502);
    fixture.fail = "hang";
    const c = await h.call("weather/air", { lat: 1, lon: 1 });
    expect(c.status).toBe(504);
    expect(c.body.error).toMatchObject({ kind: "upstream_timeout", retry: true });
    fixture.fail = null;
  });

  test("the last copy answers, marked stale, when a fresh one cannot be had", async () => {
    const first = await h.call("weather/air", { lat: 52.55, lon: 13.45 });
    expect(first.status).toBe(200);
    clock.advance(2 * 3600_000);
    fixture.fail = "500";
    const r = await h.call("weather/air", { lat: 52.55, lon: 13.45 });
    fixture.fail = null;
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({ european_aqi: 34, stale: true, cached: true });
    expect(r.body.result.age_seconds).toBeGreaterThan(3600);
  });
});
