// The iCalendar feed, read back with ical.js (the parser behind Thunderbird's
// calendar) the way a subscribing calendar would: its zones registered from
// the feed's VTIMEZONEs and repeats expanded from RRULE and RDATE.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import ICAL from "ical.js";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

let h: Hearth;
let alice: string;
let bob: string;
const clock = new TestClock(Date.parse("2026-01-15T12:00:00Z"));
const ids: Record<string, string> = {};

const defs: Record<string, Record<string, unknown>> = {
  rent: { title: "Rent, due; pay \\ now", when: "2028-01-31T09:00:00+02:00", repeat: "monthly", note: "line one\nline two" },
  thirtieth: { title: "Invoice", when: "2026-01-30T18:00:00-05:00", repeat: "monthly" },
  daily: { title: "Kathmandu standup", when: "2026-03-01T08:00:00+05:45", repeat: "daily", minutes: 15 },
  once: { title: "Flight ✈ to Zürich — gate B12, seat 14A, bring the long blue passport wallet please", when: "2026-02-10T06:30:00Z", minutes: 90 },
  weekly: { title: "Choir", when: "2026-01-20T19:30:00+01:00", repeat: "weekly", minutes: 120 },
  hourly: { title: "Stretch", when: "2026-01-15T23:30:00-09:30", repeat: "hourly", minutes: 5 },
};

beforeAll(async () => {
  h = await startHearth({ clock });
  alice = await h.token("alice");
  bob = await h.token("bob");
  for (const [k, args] of Object.entries(defs)) {
    const r = await h.call("events/create", args, { token: alice });
    expect(r.status).toBe(200);
    ids[k] = r.body.result.id;
  }
  await h.call("events/create", { title: "bob's", when: "2026-02-01T10:00:00Z" }, { token: bob });
});
afterAll(() => h.stop());

async function feedUrl(token = alice, rotate?: boolean) {
  const res = await fetch(`${h.url}/events/feed`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: rotate ? JSON.stringify({ rotate }) : undefined });
  expect(res.status).toBe(200);
  return ((await res.json()) as { result: { url: string; webcal: string; rotated: boolean } }).result;
}

function parse(text: string) {
  const cal = new ICAL.Component(ICAL.parse(text));
  for (const tz of cal.getAllSubcomponents("vtimezone")) ICAL.TimezoneService.register(tz);
  const events = new Map<string, ICAL.Event>();
  for (const v of cal.getAllSubcomponents("vevent")) {
    const e = new ICAL.Event(v);
    events.set(e.uid.split("@")[0], e);
  }
  return { cal, events };
}

function expand(e: ICAL.Event, n: number): string[] {
  const it = e.iterator();
  const out: string[] = [];
  for (let next = it.next(); next && out.length < n; next = it.next()) out.push(next.toJSDate().toISOString().replace(".000Z", "Z"));
  return out;
}

describe("feed", () => {
  test("one secret address per account, the same until rotated", async () => {
    const a = await feedUrl();
    expect(a.rotated).toBe(false);
    expect(a.url).toMatch(new RegExp(`^${h.url}/events/[A-Za-z0-9_-]{43}\\.ics$`));
    expect(a.webcal).toBe(a.url.replace(/^http:/, "webcal:"));
    expect((await feedUrl()).url).toBe(a.url);
    expect((await feedUrl(bob)).url).not.toBe(a.url);
  });

  test("the address is given only to the account's owner, within the token's scope", async () => {
    expect((await fetch(`${h.url}/events/feed`, { method: "POST" })).status).toBe(401);
    const notesOnly = await h.token("alice", { scopes: ["notes"] });
    const scoped = await fetch(`${h.url}/events/feed`, { method: "POST", headers: { authorization: `Bearer ${notesOnly}` } });
    // Out of its scope a token counts for nothing on plugin routes, so this is a stranger's call.
    expect(scoped.status).toBe(401);
    const bad = await fetch(`${h.url}/events/feed`, { method: "POST", headers: { authorization: `Bearer ${alice}` }, body: '{"rotate": "yes"}' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { field: string } }).error.field).toBe("rotate");
    // Not an API method: the agent, which sees only methods, never learns it.
    expect(h.rt.registry.get("events", "feed")).toBeUndefined();
  });

  test("is valid iCalendar with every one of the account's events and nobody else's", async () => {
    const res = await fetch((await feedUrl()).url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/calendar; charset=utf-8");
    const text = await res.text();
    expect(text.endsWith("\r\n")).toBe(true);
    for (const line of text.split("\r\n")) expect(new TextEncoder().encode(line).length).toBeLessThanOrEqual(75);
    const { cal, events } = parse(text);
    expect(cal.getFirstPropertyValue("version")).toBe("2.0");
    expect([...events.keys()].sort()).toEqual(Object.values(ids).sort());
    const host = new URL(h.url).host;
    for (const [k, id] of Object.entries(ids)) {
      const e = events.get(id)!;
      expect(e.uid).toBe(`${id}@${host}`);
      expect(e.summary).toBe(defs[k].title as string);
    }
    expect(events.get(ids.rent)!.description).toBe("line one\nline two");
    const once = events.get(ids.once)!;
    expect(once.startDate.toJSDate().toISOString()).toBe("2026-02-10T06:30:00.000Z");
    expect(once.endDate.toJSDate().getTime() - once.startDate.toJSDate().getTime()).toBe(90 * 60_000);
    expect(once.isRecurring()).toBe(false);
  });

  test("repeats expand to the same days and wall-clock times the scheduler fires on", async () => {
    const { events } = parse(await (await fetch((await feedUrl()).url)).text());
    // Monthly on the 31st at 09:00+02:00: the last day of shorter months, 29 February in 2028.
    expect(expand(events.get(ids.rent)!, 5)).toEqual(["2028-01-31T07:00:00Z", "2028-02-29T07:00:00Z", "2028-03-31T07:00:00Z", "2028-04-30T07:00:00Z", "2028-05-31T07:00:00Z"]);
    // Monthly on the 30th at 18:00-05:00: February's last day, the 30th everywhere else.
    const thirtieth = expand(events.get(ids.thirtieth)!, 26);
    expect(thirtieth.slice(0, 4)).toEqual(["2026-01-30T23:00:00Z", "2026-02-28T23:00:00Z", "2026-03-30T23:00:00Z", "2026-04-30T23:00:00Z"]);
    expect(thirtieth).toContain("2027-02-28T23:00:00Z");
    expect(thirtieth).toContain("2028-02-29T23:00:00Z");
    expect(thirtieth.filter((t) => t.slice(5, 7) === "02")).toEqual(["2026-02-28T23:00:00Z", "2027-02-28T23:00:00Z", "2028-02-29T23:00:00Z"]);
    expect(thirtieth).toHaveLength(26);
    // Daily at 08:00+05:45, an offset with minutes.
    expect(expand(events.get(ids.daily)!, 3)).toEqual(["2026-03-01T02:15:00Z", "2026-03-02T02:15:00Z", "2026-03-03T02:15:00Z"]);
    expect(expand(events.get(ids.weekly)!, 3)).toEqual(["2026-01-20T18:30:00Z", "2026-01-27T18:30:00Z", "2026-02-03T18:30:00Z"]);
    expect(expand(events.get(ids.hourly)!, 3)).toEqual(["2026-01-16T09:00:00Z", "2026-01-16T10:00:00Z", "2026-01-16T11:00:00Z"]);
  });

  test("rotating retires the old address", async () => {
    const old = await feedUrl();
    const fresh = await feedUrl(alice, true);
    expect(fresh.rotated).toBe(true);
    expect(fresh.url).not.toBe(old.url);
    expect((await fetch(old.url)).status).toBe(404);
    expect((await fetch(fresh.url)).status).toBe(200);
  });

  test("an unknown or malformed address is 404", async () => {
    const { url } = await feedUrl();
    expect((await fetch(`${h.url}/events/${"A".repeat(43)}.ics`)).status).toBe(404);
    expect((await fetch(url.replace(/\.ics$/, ""))).status).toBe(404);
    const r = await fetch(`${h.url}/events/nothing.ics`);
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: { kind: string } }).error.kind).toBe("not_found");
  });

  test("a deleted event leaves the feed", async () => {
    await h.call("events/delete", { id: ids.hourly }, { token: alice });
    const { events } = parse(await (await fetch((await feedUrl()).url)).text());
    expect(events.has(ids.hourly)).toBe(false);
    expect(events.size).toBe(Object.keys(ids).length - 1);
  });
});
