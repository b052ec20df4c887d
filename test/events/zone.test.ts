// Repeating events in the instance's time zone: a daily 09:00 in London stays
// at 09:00 local on both sides of the spring and autumn clock changes, while a
// time given in another offset (or in Z) keeps that fixed offset.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import ICAL from "ical.js";
import { schedulerOf } from "../../core/scheduler/index.ts";
import { eventZone } from "../../plugins/events/zone.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { sqlAll, sqlGet } from "../sql.ts";

const at = (iso: string) => Date.parse(iso);

describe("repeats in the instance's zone (HEARTH_TZ=Europe/London)", () => {
  let h: Hearth;
  let alice: string;
  const clock = new TestClock(at("2027-03-20T12:00:00Z"));
  beforeAll(async () => {
    h = await startHearth({ clock, env: { HEARTH_TZ: "Europe/London" } });
    alice = await h.token("alice");
  });
  afterAll(() => h.stop());
  const run = () => schedulerOf(h.rt).runDue();
  const fired = async (ref: string) =>
    (await sqlAll<{ due: number }>(h.rt, "SELECT due FROM schedule_firings WHERE ref = ? AND status = 'done' ORDER BY due", ref)).map((r) => new Date(r.due).toISOString());
  const listed = async (id: string) => (await h.call("events/list", {}, { token: alice })).body.result.find((e: { id: string }) => e.id === id);

  test("a daily 09:00 made in winter fires at 09:00 local before and after the March change", async () => {
    const made = await h.call("events/create", { title: "Stand-up", when: "2027-03-26T09:00:00+00:00", repeat: "daily" }, { token: alice });
    expect(made.status).toBe(200);
    const ev = made.body.result;
    expect(ev.tz).toBe("Europe/London");
    expect(ev.next).toBe("2027-03-26T09:00:00Z");
    // Clocks go forward at 01:00 UTC on Sunday 28 March 2027.
    for (const day of ["2027-03-26T09:00:00Z", "2027-03-27T09:00:00Z", "2027-03-28T08:00:00Z", "2027-03-29T08:00:00Z"]) {
      clock.set(new Date(at(day) - 1000));
      await run();
      expect(await fired(ev.id)).not.toContain(new Date(day).toISOString());
      clock.set(day);
      await run();
      expect(await fired(ev.id)).toContain(new Date(day).toISOString());
    }
    // 09:00 UTC on the 29th is 10:00 in London: nothing fires then.
    expect(await fired(ev.id)).toEqual(["2027-03-26T09:00:00.000Z", "2027-03-27T09:00:00.000Z", "2027-03-28T08:00:00.000Z", "2027-03-29T08:00:00.000Z"]);
    clock.set("2027-03-29T12:00:00Z");
    const shown = await listed(ev.id);
    expect(shown).toMatchObject({ when: "2027-03-26T09:00:00Z", tz: "Europe/London", next: "2027-03-30T09:00:00+01:00", ends: "2027-03-30T09:30:00+01:00" });
    expect(shown.history[0]).toMatchObject({ at: "2027-03-29T09:00:00+01:00", status: "done" });
    const row = (await sqlGet<{ tz: string | null }>(h.rt, "SELECT tz FROM events_events WHERE id = ?", ev.id))!;
    expect(eventZone(row)).toBe("Europe/London");
  });

  test("autumn: back to 09:00 GMT after the October change, and the free slots follow", async () => {
    clock.set("2027-10-29T12:00:00Z");
    const ev = (await h.call("events/create", { title: "Walk", when: "2027-10-30T09:00:00+01:00", repeat: "daily" }, { token: alice })).body.result;
    expect(ev.tz).toBe("Europe/London");
    clock.set("2027-10-31T12:00:00Z");
    const shown = await listed(ev.id);
    expect(shown.next).toBe("2027-11-01T09:00:00Z");
    const free = (await h.call("events/free", { from: "2027-11-01T08:00:00Z", to: "2027-11-01T11:00:00Z", day_start: 0, day_end: 24, minutes: 15 }, { token: alice })).body.result;
    expect(free.slots[0]).toMatchObject({ start: "2027-11-01T08:00:00Z", end: "2027-11-01T09:00:00Z" });
  });

  test("a time in another offset, or in Z, keeps its fixed offset", async () => {
    clock.set("2027-03-20T12:00:00Z");
    const india = (await h.call("events/create", { title: "Call", when: "2027-03-26T09:00:00+05:30", repeat: "daily" }, { token: alice })).body.result;
    const utc = (await h.call("events/create", { title: "Backup", when: "2027-03-26T09:00:00Z", repeat: "daily" }, { token: alice })).body.result;
    expect(india.tz).toBeNull();
    expect(utc.tz).toBeNull();
    clock.set("2027-03-29T12:00:00Z");
    expect((await listed(india.id)).next).toBe("2027-03-30T09:00:00+05:30");
    expect((await listed(utc.id)).next).toBe("2027-03-30T09:00:00Z");
    expect((await sqlAll(h.rt, "SELECT 1 FROM events_events WHERE tz IS NULL")).length).toBeGreaterThanOrEqual(2);
  });

  test("the calendar feed gives the zone, so a subscribed calendar shows the same local times", async () => {
    clock.set("2027-03-20T12:00:00Z");
    const ev = (await h.call("events/create", { title: "Pills", when: "2027-03-26T21:00:00+00:00", repeat: "daily" }, { token: alice })).body.result;
    const feed = await fetch(`${h.url}/events/feed`, { method: "POST", headers: { authorization: `Bearer ${alice}` } });
    const text = await (await fetch(((await feed.json()) as { result: { url: string } }).result.url)).text();
    expect(text).toContain("TZID:Europe/London");
    const cal = new ICAL.Component(ICAL.parse(text));
    for (const tz of cal.getAllSubcomponents("vtimezone")) ICAL.TimezoneService.register(tz);
    const v = cal.getAllSubcomponents("vevent").map((c) => new ICAL.Event(c)).find((e) => e.uid.startsWith(ev.id))!;
    const it = v.iterator();
    const shown: string[] = [];
    for (let next = it.next(); next && shown.length < 4; next = it.next()) shown.push(next.toJSDate().toISOString());
    expect(shown).toEqual(["2027-03-26T21:00:00.000Z", "2027-03-27T21:00:00.000Z", "2027-03-28T20:00:00.000Z", "2027-03-29T20:00:00.000Z"]);
  });
});

describe("zone offsets read from a year's table of clock changes", () => {
  test("agree with Intl, second by second around each change and at random instants, in zones with half-hour and southern changes", async () => {
    const { zoneOffset } = await import("../../core/scheduler/zone.ts");
    const formats = new Map<string, Intl.DateTimeFormat>();
    const intl = (tz: string, t: number) => {
      let f = formats.get(tz);
      if (!f) formats.set(tz, (f = new Intl.DateTimeFormat("en-US", { timeZone: tz, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric" })));
      const p = Object.fromEntries(f.formatToParts(new Date(t)).map((x) => [x.type, Number(x.value)]));
      return Math.round((Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(t / 1000) * 1000) / 60_000);
    };
    // A fixed sequence, so a failure is the same on every run.
    let seed = 7;
    const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    const wrong: string[] = [];
    for (const tz of ["Europe/London", "America/New_York", "Australia/Lord_Howe", "America/Santiago", "Asia/Kathmandu", "Pacific/Chatham", "UTC"]) {
      for (let i = 0; i < 300; i++) {
        const t = Date.UTC(1990, 0, 1) + Math.floor(random() * 45 * 365 * 86_400_000);
        if (zoneOffset(tz, t) !== intl(tz, t)) wrong.push(`${tz} ${new Date(t).toISOString()}`);
      }
      // Either side of each change in 2026: a second before, at, and after.
      let last = intl(tz, Date.UTC(2026, 0, 1));
      for (let t = Date.UTC(2026, 0, 1); t < Date.UTC(2027, 0, 1); t += 6 * 3_600_000) {
        const o = intl(tz, t);
        if (o === last) continue;
        // The change to the second, then the seconds either side of it.
        let [a, b] = [t - 6 * 3_600_000, t];
        while (b - a > 1000) {
          const mid = a + Math.floor((b - a) / 2000) * 1000;
          if (intl(tz, mid) === last) a = mid;
          else b = mid;
        }
        for (let s = b - 3000; s <= b + 3000; s += 1000) if (zoneOffset(tz, s) !== intl(tz, s)) wrong.push(`${tz} ${new Date(s).toISOString()}`);
        last = o;
      }
    }
    expect(wrong).toEqual([]);
  });
});
