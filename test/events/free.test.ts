// events/free against calendars whose open slots were worked out by hand.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

let h: Hearth;
let alice: string;
let bob: string;
const clock = new TestClock(Date.parse("2026-03-01T12:00:00Z"));

const slots = (r: { body: { result: { slots: { start: string; end: string; minutes: number }[] } } }) =>
  r.body.result.slots.map((s) => `${s.start} ${s.end} ${s.minutes}`);

beforeAll(async () => {
  h = await startHearth({ clock });
  alice = await h.token("alice");
  bob = await h.token("bob");
  const add = async (token: string, args: Record<string, unknown>) => expect((await h.call("events/create", args, { token })).status).toBe(200);
  // Every day at 09:00+01:00 for 15 minutes, since February.
  await add(alice, { title: "Standup", when: "2026-02-01T09:00:00+01:00", minutes: 15, repeat: "daily" });
  await add(alice, { title: "Lunch", when: "2026-03-02T12:00:00+01:00", minutes: 60 });
  // 17:30 on Monday to 09:30 on Tuesday: straddles the day boundary.
  await add(alice, { title: "Night shift", when: "2026-03-02T17:30:00+01:00", minutes: 960 });
  // Given in +05:00: 10:00-11:30 in +01:00.
  await add(alice, { title: "Call with Karachi", when: "2026-03-03T14:00:00+05:00", minutes: 90 });
  // Tuesdays 15:00-17:00 since 2026-02-24.
  await add(alice, { title: "Review", when: "2026-02-24T15:00:00+01:00", minutes: 120, repeat: "weekly" });
  // Monthly on the 31st: 2027-02-28 in a year that is not a leap year.
  await add(alice, { title: "Rent", when: "2027-01-31T10:00:00Z", minutes: 30, repeat: "monthly" });
  // Someone else's calendar never blocks alice.
  await add(bob, { title: "Bob's meeting", when: "2026-03-02T10:00:00+01:00", minutes: 240 });
});
afterAll(() => h.stop());

const free = (args: Record<string, unknown>, token = alice) => h.call("events/free", args, { token });

describe("free", () => {
  test("two working days in +01:00, slots of an hour", async () => {
    const r = await free({ from: "2026-03-02T00:00:00+01:00", to: "2026-03-04T00:00:00+01:00", minutes: 60 });
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({ from: "2026-03-02T00:00:00+01:00", to: "2026-03-04T00:00:00+01:00", minutes: 60 });
    expect(slots(r)).toEqual([
      // Monday: standup 09:00-09:15, lunch 12:00-13:00, night shift from 17:30.
      "2026-03-02T09:15:00+01:00 2026-03-02T12:00:00+01:00 165",
      "2026-03-02T13:00:00+01:00 2026-03-02T17:30:00+01:00 270",
      // Tuesday: night shift until 09:30 (09:30-10:00 is too short), Karachi 10:00-11:30, review 15:00-17:00.
      "2026-03-03T11:30:00+01:00 2026-03-03T15:00:00+01:00 210",
      "2026-03-03T17:00:00+01:00 2026-03-03T18:00:00+01:00 60",
    ]);
  });

  test("shorter slots show the half hour the longer ones skipped", async () => {
    const r = await free({ from: "2026-03-03T00:00:00+01:00", to: "2026-03-04T00:00:00+01:00", minutes: 30 });
    expect(slots(r)).toEqual([
      "2026-03-03T09:30:00+01:00 2026-03-03T10:00:00+01:00 30",
      "2026-03-03T11:30:00+01:00 2026-03-03T15:00:00+01:00 210",
      "2026-03-03T17:00:00+01:00 2026-03-03T18:00:00+01:00 60",
    ]);
  });

  test("working hours are read in the offset of from", async () => {
    const r = await free({ from: "2026-03-02T00:00:00Z", to: "2026-03-03T00:00:00Z", minutes: 60 });
    // 09:00-18:00Z; standup 08:00-08:15Z, lunch 11:00-12:00Z, night shift from 16:30Z.
    expect(slots(r)).toEqual(["2026-03-02T09:00:00Z 2026-03-02T11:00:00Z 120", "2026-03-02T12:00:00Z 2026-03-02T16:30:00Z 270"]);
  });

  test("day_start and day_end narrow the day", async () => {
    const r = await free({ from: "2026-03-02T00:00:00+01:00", to: "2026-03-03T00:00:00+01:00", minutes: 30, day_start: 7, day_end: 10 });
    expect(slots(r)).toEqual(["2026-03-02T07:00:00+01:00 2026-03-02T09:00:00+01:00 120", "2026-03-02T09:15:00+01:00 2026-03-02T10:00:00+01:00 45"]);
  });

  test("a monthly repeat on the 31st books the last day of February", async () => {
    const r = await free({ from: "2027-02-28T00:00:00Z", to: "2027-03-01T00:00:00Z", minutes: 30 });
    // The daily standup runs at 08:00Z, before the working day.
    expect(slots(r)).toEqual(["2027-02-28T09:00:00Z 2027-02-28T10:00:00Z 60", "2027-02-28T10:30:00Z 2027-02-28T18:00:00Z 450"]);
  });

  test("from defaults to now and to to a week later", async () => {
    clock.set("2026-03-10T16:20:30Z");
    const r = await free({ minutes: 60 });
    expect(r.status).toBe(200);
    expect(r.body.result.from).toBe("2026-03-10T16:21:00Z");
    expect(r.body.result.to).toBe("2026-03-17T16:21:00Z");
    // A Tuesday: the review (14:00-16:00Z) is over, so the rest of the working day is open.
    expect(slots(r)[0]).toBe("2026-03-10T16:21:00Z 2026-03-10T18:00:00Z 99");
  });

  const refusals: [string, Record<string, unknown>, string, RegExp][] = [
    ["day_start not before day_end", { day_start: 18, day_end: 9 }, "day_end", /later than day_start/],
    ["equal hours", { day_start: 9, day_end: 9 }, "day_end", /later than day_start/],
    ["to before from", { from: "2026-03-02T00:00:00Z", to: "2026-03-01T00:00:00Z" }, "to", /later than from/],
    ["to equal to from", { from: "2026-03-02T00:00:00Z", to: "2026-03-02T00:00:00Z" }, "to", /later than from/],
    ["a window over 90 days", { from: "2026-03-02T00:00:00Z", to: "2026-06-01T00:00:01Z" }, "to", /90 days/],
    ["from without an offset", { from: "2026-03-02T00:00:00" }, "from", /offset/],
    ["an hour out of range", { day_start: 24 }, "day_start", /at most 23/],
    ["zero minutes", { minutes: 0 }, "minutes", /at least 1/],
  ];
  for (const [what, args, field, message] of refusals) {
    test(`refuses ${what} with 400 naming ${field}`, async () => {
      const r = await free(args);
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe(field);
      expect(r.body.error.message).toMatch(message);
    });
  }

  test("a window of exactly 90 days is allowed", async () => {
    const r = await free({ from: "2026-03-02T00:00:00Z", to: "2026-05-31T00:00:00Z", minutes: 600 });
    expect(r.status).toBe(200);
    expect(r.body.result.slots).toEqual([]);
  });

  test("bob's calendar is free where alice's is busy", async () => {
    const r = await free({ from: "2026-03-02T00:00:00+01:00", to: "2026-03-03T00:00:00+01:00", minutes: 60 }, bob);
    expect(slots(r)).toEqual(["2026-03-02T09:00:00+01:00 2026-03-02T10:00:00+01:00 60", "2026-03-02T14:00:00+01:00 2026-03-02T18:00:00+01:00 240"]);
  });
});
