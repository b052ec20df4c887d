// one store: the rate limits a first sync meets, whose buckets are the same whatever the store; DAV writes and reads run on both stores in test/dav (caldav, carddav, keep, queries, series)
// A phone's first sync uploads its whole task list or address book in one go:
// with the default settings none of it is refused by the rate limits, which
// still bound it (a change from a calendar app takes a turn from a bucket of
// its own, not one per call it makes from the write limit).
import { afterEach, describe, expect, test } from "bun:test";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

let h: Hearth | null = null;
afterEach(async () => {
  await h?.stop();
  h = null;
});

/** The smallest VTODO a client sends. */
const vtodo = (i: number) => `BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Test//EN\r\nBEGIN:VTODO\r\nUID:t${i}\r\nDTSTAMP:20260301T000000Z\r\nSUMMARY:Task ${i}\r\nEND:VTODO\r\nEND:VCALENDAR\r\n`;

// More than the write and read limits hold together (1,500), so only the DAV limit's own bucket can take them all. A
// phone's first sync of 5,000 events, with the same limits, is bench/dav.ts's (which times it on both stores).
const EVENTS = 2000;
const p2 = (n: number) => String(n).padStart(2, "0");
/** An event a day through 2027 in London time; every tenth a series as a phone writes it (its first date left out). */
const vevent = (i: number) => {
  const day = new Date(Date.UTC(2027, 0, 1) + (i % 365) * 86_400_000);
  const start = `${day.getUTCFullYear()}${p2(day.getUTCMonth() + 1)}${p2(day.getUTCDate())}T${p2(8 + (i % 10))}0000`;
  const series = i % 10 === 0 ? [`RRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=6`, `EXDATE;TZID=Europe/London:${start}`] : [];
  return ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Test//EN", "BEGIN:VEVENT", `UID:e${i}`, "DTSTAMP:20260301T000000Z", `DTSTART;TZID=Europe/London:${start}`, "DURATION:PT45M", `SUMMARY:Event ${i}`, ...series, "END:VEVENT", "END:VCALENDAR", ""].join("\r\n");
};

// More than the write limit's 300 a minute and the read limit's 1,200 together, sent as fast as one client can.
const COUNT = 1500;

describe("a first sync", () => {
  test(`${COUNT} tasks PUT one after another from one client, with the default limits: none refused`, async () => {
    h = await startHearth();
    const token = await h.token("alice");
    const headers = { authorization: `Basic ${Buffer.from(`alice:${token}`).toString("base64")}`, "content-type": "text/calendar", "if-none-match": "*" };
    const statuses: Record<number, number> = {};
    let next = 0;
    // Four at a time, as a phone's sync does.
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let i = next++; i < COUNT; i = next++) {
          const r = await fetch(`${h!.url}/dav/calendars/alice/tasks/t${i}.ics`, { method: "PUT", body: vtodo(i), headers });
          await r.arrayBuffer();
          statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        }
      }),
    );
    expect(statuses).toEqual({ 201: COUNT });
    expect((await h.row<{ n: number }>("SELECT count(*) AS n FROM tasks"))!.n).toBe(COUNT);
  });

  test(`${EVENTS} events PUT four at a time, a tenth of them series a phone writes (every other week, an end, a date left out), with the default limits: none refused`, async () => {
    // The clock stands still, so the limit's bucket never refills: what is judged is that it holds a first sync this size, however fast the machine sends it.
    h = await startHearth({ clock: new TestClock(Date.parse("2026-12-01T12:00:00Z")) });
    const token = await h.token("alice");
    const headers = { authorization: `Basic ${Buffer.from(`alice:${token}`).toString("base64")}`, "content-type": "text/calendar", "if-none-match": "*" };
    const statuses: Record<number, number> = {};
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let i = next++; i < EVENTS; i = next++) {
          const r = await fetch(`${h!.url}/dav/calendars/alice/events/e${i}.ics`, { method: "PUT", body: vevent(i), headers });
          await r.arrayBuffer();
          statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        }
      }),
    );
    expect(statuses).toEqual({ 201: EVENTS });
    expect((await h.row<{ n: number }>("SELECT count(*) AS n FROM events_events"))!.n).toBe(EVENTS);
    expect((await h.row<{ n: number }>("SELECT count(*) AS n FROM events_events WHERE rule IS NOT NULL"))!.n).toBe(EVENTS / 10);
  });

  test("changes from calendar apps are still bounded: past the DAV limit they are refused with Retry-After", async () => {
    h = await startHearth({ env: { HEARTH_RATE_DAV_WRITES: "5" } });
    const token = await h.token("alice");
    const headers = { authorization: `Basic ${Buffer.from(`alice:${token}`).toString("base64")}`, "content-type": "text/calendar" };
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await fetch(`${h.url}/dav/calendars/alice/tasks/t${i}.ics`, { method: "PUT", body: vtodo(i), headers })).status);
    expect(statuses).toEqual([201, 201, 201, 201, 201, 429, 429]);
    const refused = await fetch(`${h.url}/dav/calendars/alice/tasks/t9.ics`, { method: "DELETE", headers });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
