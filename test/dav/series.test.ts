// Calendar apps' series over CalDAV, fired by the scheduler on an injected
// clock exactly when the phone that wrote them shows them: a TZID's local
// time across a daylight-saving change (with and without its VTIMEZONE),
// every other week with COUNT, UNTIL, an EXDATE and one occurrence moved,
// cancelled occurrences and series, all-day and floating times; the same
// occurrences in a calendar-query's expand; long notes kept.
import { afterEach, describe, expect, test } from "bun:test";
import { schedulerOf } from "../../core/scheduler/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { sqlAll } from "../sql.ts";
import { appleEvent } from "./fixtures.ts";

let h: Hearth | null = null;
afterEach(async () => {
  await h?.stop();
  h = null;
});

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;

const calendar = (...events: string[][]) =>
  ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Test Phone//EN", ...events.flatMap((e) => ["BEGIN:VEVENT", ...e, "END:VEVENT"]), "END:VCALENDAR", ""].join("\r\n");

async function setup(clockAt: string, env: Record<string, string> = {}) {
  const clock = new TestClock(Date.parse(clockAt));
  h = await startHearth({ clock, env });
  const token = await h.token("alice");
  const auth = { authorization: basic("alice", token) };
  const put = (name: string, body: string) => fetch(`${h!.url}/dav/calendars/alice/events/${name}`, { method: "PUT", body, headers: { ...auth, "content-type": "text/calendar" } });
  const list = async () => (await h!.call("events/list", {}, { token })).body.result as Record<string, unknown>[];
  /** Walks the clock through the instants given, running the scheduler at each and a millisecond before; returns what fired (ISO, UTC). */
  const walk = async (instants: string[]) => {
    for (const iso of [...instants].sort()) {
      clock.set(new Date(Date.parse(iso) - 1));
      await schedulerOf(h!.rt).runDue();
      clock.set(iso);
      await schedulerOf(h!.rt).runDue();
    }
    const rows = await sqlAll<{ due: number; status: string }>(h!.rt, "SELECT due, status FROM schedule_firings WHERE service = 'events' ORDER BY due");
    return rows.map((r) => `${new Date(r.due).toISOString().replace(".000", "")} ${r.status}`);
  };
  return { clock, token, auth, put, list, walk };
}

describe("series from calendar apps", () => {
  test("a weekly TZID=Europe/London 09:00 event made in March fires at 09:00 London on both sides of the clock change, with or without its VTIMEZONE", async () => {
    const s = await setup("2026-03-18T12:00:00Z");
    // No VTIMEZONE: the zone is the IANA database's, not UTC.
    const bare = calendar(["UID:yoga-1", "DTSTAMP:20260301T000000Z", "DTSTART;TZID=Europe/London:20260319T090000", "DURATION:PT1H", "RRULE:FREQ=WEEKLY", "SUMMARY:Yoga"]);
    expect((await s.put("yoga.ics", bare)).status).toBe(201);
    // Apple's, with its VTIMEZONE: Tuesdays 09:30 from 3 March.
    expect((await s.put("pilates.ics", appleEvent)).status).toBe(201);
    const listed = await s.list();
    const [yoga, pilates] = ["Yoga", "Pilates"].map((t) => listed.find((e) => e.title === t));
    expect(yoga).toMatchObject({ title: "Yoga", when: "2026-03-19T09:00:00Z", tz: "Europe/London", repeat: "weekly", next: "2026-03-19T09:00:00Z", minutes: 60 });
    expect(pilates).toMatchObject({ title: "Pilates", tz: "Europe/London", repeat: "weekly" });
    // 29 March 2026: London goes from GMT to BST.
    const fired = await s.walk(["2026-03-19T09:00:00Z", "2026-03-26T09:00:00Z", "2026-04-02T08:00:00Z", "2026-04-09T08:00:00Z", "2026-03-24T09:30:00Z", "2026-03-31T08:30:00Z", "2026-04-07T08:30:00Z"]);
    expect(fired).toEqual([
      "2026-03-19T09:00:00Z done",
      "2026-03-24T09:30:00Z done",
      "2026-03-26T09:00:00Z done",
      "2026-03-31T08:30:00Z done",
      "2026-04-02T08:00:00Z done",
      "2026-04-07T08:30:00Z done",
      "2026-04-09T08:00:00Z done",
    ]);
    expect((await s.list()).find((e) => e.title === "Yoga")).toMatchObject({ next: "2026-04-09T09:00:00+01:00" });
  });

  test("every other week, COUNT=5, an EXDATE and one occurrence moved: fires on exactly the four a phone shows, and expand gives the same four", async () => {
    const s = await setup("2026-03-01T12:00:00Z");
    const series = calendar(
      ["UID:review-1", "DTSTAMP:20260301T000000Z", "DTSTART;TZID=Europe/London:20260305T090000", "DTEND;TZID=Europe/London:20260305T100000", "RRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=5", "EXDATE;TZID=Europe/London:20260319T090000", "SUMMARY:Review", "BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:-PT10M", "DESCRIPTION:Review", "END:VALARM"],
      // The 2 April occurrence (09:00 BST, written in UTC as some apps do) moved to Friday 3 April at 14:00.
      ["UID:review-1", "DTSTAMP:20260301T000000Z", "RECURRENCE-ID:20260402T080000Z", "DTSTART;TZID=Europe/London:20260403T140000", "DTEND;TZID=Europe/London:20260403T150000", "SUMMARY:Review (moved)"],
    );
    const made = await s.put("review.ics", series);
    expect(made.status).toBe(201);
    const [e] = await s.list();
    expect(e).toMatchObject({ title: "Review", repeat: "weekly", rule: "FREQ=WEEKLY;COUNT=5;INTERVAL=2", excluded: 1, changed: 1, next: "2026-03-05T09:00:00Z" });
    // The client's text is the record: read back byte for byte.
    const got = await fetch(`${h!.url}/dav/calendars/alice/events/review.ics`, { headers: s.auth });
    expect(await got.text()).toBe(series);

    const shown = ["2026-03-05T09:00:00Z", "2026-04-03T13:00:00Z", "2026-04-16T08:00:00Z", "2026-04-30T08:00:00Z"];
    // What is not shown: the excluded 19 March, the moved occurrence's own time, and what COUNT ends before.
    const notShown = ["2026-03-19T09:00:00Z", "2026-04-02T08:00:00Z", "2026-05-14T08:00:00Z", "2026-05-28T08:00:00Z"];
    const report = await fetch(`${h!.url}/dav/calendars/alice/events/`, {
      method: "REPORT",
      headers: { ...s.auth, depth: "1", "content-type": "application/xml" },
      body: `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><c:calendar-data><c:expand start="20260301T000000Z" end="20260701T000000Z"/></c:calendar-data></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="20260301T000000Z" end="20260701T000000Z"/></c:comp-filter></c:comp-filter></c:filter></c:calendar-query>`,
    });
    expect(report.status).toBe(207);
    const xml = await report.text();
    const starts = [...xml.matchAll(/DTSTART:(\d{8}T\d{6}Z)/g)].map((m) => m[1]);
    const iso = (t: string) => `${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)}T${t.slice(9, 11)}:${t.slice(11, 13)}:${t.slice(13, 15)}Z`;
    expect(starts.map(iso)).toEqual(shown);
    expect(xml).toContain("SUMMARY:Review (moved)");
    // A month with only the excluded date in it matches nothing.
    const march = await fetch(`${h!.url}/dav/calendars/alice/events/`, {
      method: "REPORT",
      headers: { ...s.auth, depth: "1", "content-type": "application/xml" },
      body: `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="20260315T000000Z" end="20260325T000000Z"/></c:comp-filter></c:comp-filter></c:filter></c:calendar-query>`,
    });
    expect(await march.text()).not.toContain("review.ics");

    expect(await s.walk([...shown, ...notShown, "2027-01-01T00:00:00Z"])).toEqual(shown.map((t) => `${t} done`));
    expect((await s.list()).length).toBe(0);
  });

  test("events/free is busy for a moved occurrence as long as its own DTEND or DURATION says, not the series' length", async () => {
    const s = await setup("2026-06-01T00:00:00Z");
    const series = calendar(
      // Thursdays 10:00-11:00 London (BST, +01:00 in June).
      ["UID:sync-1", "DTSTAMP:20260601T000000Z", "DTSTART;TZID=Europe/London:20260604T100000", "DTEND;TZID=Europe/London:20260604T110000", "RRULE:FREQ=WEEKLY;COUNT=4", "SUMMARY:Sync"],
      // 11 June moved to 14:00 and made three hours long by its DTEND.
      ["UID:sync-1", "DTSTAMP:20260601T000000Z", "RECURRENCE-ID;TZID=Europe/London:20260611T100000", "DTSTART;TZID=Europe/London:20260611T140000", "DTEND;TZID=Europe/London:20260611T170000", "SUMMARY:Sync (long)"],
      // 18 June moved to 09:00 and made two and a half hours long by its DURATION.
      ["UID:sync-1", "DTSTAMP:20260601T000000Z", "RECURRENCE-ID;TZID=Europe/London:20260618T100000", "DTSTART;TZID=Europe/London:20260618T090000", "DURATION:PT2H30M", "SUMMARY:Sync (early)"],
    );
    expect((await s.put("sync.ics", series)).status).toBe(201);
    const free = async (from: string, to: string) => {
      const r = await h!.call("events/free", { from, to, minutes: 30 }, { token: s.token });
      expect(r.status).toBe(200);
      return (r.body.result.slots as { start: string; end: string }[]).map((x) => `${x.start} ${x.end}`);
    };
    // An unmoved one: busy its hour.
    expect(await free("2026-06-04T00:00:00+01:00", "2026-06-05T00:00:00+01:00")).toEqual(["2026-06-04T09:00:00+01:00 2026-06-04T10:00:00+01:00", "2026-06-04T11:00:00+01:00 2026-06-04T18:00:00+01:00"]);
    expect(await free("2026-06-11T00:00:00+01:00", "2026-06-12T00:00:00+01:00")).toEqual(["2026-06-11T09:00:00+01:00 2026-06-11T14:00:00+01:00", "2026-06-11T17:00:00+01:00 2026-06-11T18:00:00+01:00"]);
    expect(await free("2026-06-18T00:00:00+01:00", "2026-06-19T00:00:00+01:00")).toEqual(["2026-06-18T11:30:00+01:00 2026-06-18T18:00:00+01:00"]);
    // A window starting inside the long one still sees it.
    expect(await free("2026-06-11T15:00:00+01:00", "2026-06-11T18:00:00+01:00")).toEqual(["2026-06-11T17:00:00+01:00 2026-06-11T18:00:00+01:00"]);
  });

  test("UNTIL with BYDAY, a cancelled occurrence and a cancelled series: what is cancelled never fires, and the series still syncs", async () => {
    const s = await setup("2026-03-01T12:00:00Z");
    const classes = calendar(
      ["UID:class-1", "DTSTAMP:20260301T000000Z", "DTSTART:20260302T180000Z", "DURATION:PT90M", "RRULE:FREQ=WEEKLY;BYDAY=MO,WE;UNTIL=20260312T000000Z", "SUMMARY:Class"],
      ["UID:class-1", "DTSTAMP:20260301T000000Z", "RECURRENCE-ID:20260304T180000Z", "DTSTART:20260304T180000Z", "DURATION:PT90M", "STATUS:CANCELLED", "SUMMARY:Class"],
    );
    expect((await s.put("class.ics", classes)).status).toBe(201);
    const off = calendar(["UID:party-1", "DTSTAMP:20260301T000000Z", "DTSTART:20260303T200000Z", "DURATION:PT3H", "STATUS:CANCELLED", "SUMMARY:Party"]);
    expect((await s.put("party.ics", off)).status).toBe(201);
    expect(await s.walk(["2026-03-02T18:00:00Z", "2026-03-03T20:00:00Z", "2026-03-04T18:00:00Z", "2026-03-09T18:00:00Z", "2026-03-11T18:00:00Z", "2026-03-16T18:00:00Z"])).toEqual([
      "2026-03-02T18:00:00Z done",
      "2026-03-09T18:00:00Z done",
      "2026-03-11T18:00:00Z done",
    ]);
  });

  test("all-day and floating times are read in the instance's zone, a multi-day event keeps its length, and a note over 10,000 characters syncs whole", async () => {
    const s = await setup("2026-06-01T00:00:00Z", { HEARTH_TZ: "Europe/London" });
    const note = `Packing list.\\n${"socks, ".repeat(2500)}`;
    const trip = calendar(["UID:trip-1", "DTSTAMP:20260601T000000Z", "DTSTART;VALUE=DATE:20260610", "DTEND;VALUE=DATE:20260613", "SUMMARY:Trip", `DESCRIPTION:${note}`]);
    expect(note.length).toBeGreaterThan(10_000);
    expect((await s.put("trip.ics", trip)).status).toBe(201);
    const call = calendar(["UID:call-1", "DTSTAMP:20260601T000000Z", "DTSTART:20260611T090000", "DURATION:PT30M", "SUMMARY:Call"]);
    expect((await s.put("call.ics", call)).status).toBe(201);
    const [t, c] = await s.list();
    expect(t).toMatchObject({ title: "Trip", when: "2026-06-10T00:00:00+01:00", tz: "Europe/London", minutes: 3 * 1440 });
    expect((t.note as string).length).toBe(note.replaceAll("\\n", "\n").length);
    expect(c).toMatchObject({ title: "Call", when: "2026-06-11T09:00:00+01:00", tz: "Europe/London" });
    const got = await fetch(`${h!.url}/dav/calendars/alice/events/trip.ics`, { headers: s.auth });
    expect(await got.text()).toBe(trip);
    // London midnight and 09:00 in summer are an hour before UTC's.
    expect(await s.walk(["2026-06-09T23:00:00Z", "2026-06-11T08:00:00Z", "2026-06-11T09:00:00Z"])).toEqual(["2026-06-09T23:00:00Z done", "2026-06-11T08:00:00Z done"]);
  });

  test("a calendar-query reads floating and all-day times in the instance's zone, where they fire, and expand keeps all-day dates", async () => {
    // Tokyo: nine hours east of UTC, no clock changes.
    const s = await setup("2026-06-01T00:00:00Z", { HEARTH_TZ: "Asia/Tokyo" });
    expect((await s.put("call.ics", calendar(["UID:call-2", "DTSTAMP:20260601T000000Z", "DTSTART:20260611T090000", "DURATION:PT30M", "SUMMARY:Call"]))).status).toBe(201);
    expect((await s.put("days.ics", calendar(["UID:days-1", "DTSTAMP:20260601T000000Z", "DTSTART;VALUE=DATE:20260610", "RRULE:FREQ=DAILY;COUNT=3", "SUMMARY:Festival"]))).status).toBe(201);
    const query = async (start: string, end: string, expand = "") => {
      const r = await fetch(`${h!.url}/dav/calendars/alice/events/`, {
        method: "REPORT",
        headers: { ...s.auth, depth: "1", "content-type": "application/xml" },
        body: `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/>${expand}</d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="${start}" end="${end}"/></c:comp-filter></c:comp-filter></c:filter></c:calendar-query>`,
      });
      expect(r.status).toBe(207);
      const xml = await r.text();
      return { names: ["call.ics", "days.ics"].filter((n) => xml.includes(n)), xml };
    };
    // 09:00 in Tokyo is midnight UTC: found there, not at 09:00 UTC.
    expect((await query("20260611T000000Z", "20260611T001500Z")).names).toEqual(["call.ics", "days.ics"]);
    expect((await query("20260611T090000Z", "20260611T091500Z")).names).toEqual(["days.ics"]);
    // The festival runs from Tokyo's midnight on the 10th (15:00 UTC on the 9th) to its midnight after the 12th (15:00 UTC on the 12th).
    expect((await query("20260609T160000Z", "20260609T170000Z")).names).toEqual(["days.ics"]);
    expect((await query("20260612T180000Z", "20260612T190000Z")).names).toEqual([]);
    // Where it fires is where it is found.
    expect(await s.walk(["2026-06-11T00:00:00Z"])).toContain("2026-06-11T00:00:00Z done");
    const { xml } = await query("20260601T000000Z", "20260701T000000Z", '<c:calendar-data><c:expand start="20260601T000000Z" end="20260701T000000Z"/></c:calendar-data>');
    expect([...xml.matchAll(/DTSTART;VALUE=DATE:(\d{8})/g)].map((m) => m[1])).toEqual(["20260610", "20260611", "20260612"]);
    expect(xml).toContain("DTSTART:20260611T000000Z");
  });

  test("a moved occurrence changed again keeps the event's id and fires once, and a body over the cap is refused as max-resource-size", async () => {
    const s = await setup("2026-03-01T12:00:00Z");
    const v1 = calendar(["UID:standup-1", "DTSTAMP:20260301T000000Z", "DTSTART:20260302T090000Z", "DURATION:PT15M", "RRULE:FREQ=DAILY;COUNT=3", "SUMMARY:Standup"]);
    expect((await s.put("standup.ics", v1)).status).toBe(201);
    const [before] = await s.list();
    expect(await s.walk(["2026-03-02T09:00:00Z"])).toEqual(["2026-03-02T09:00:00Z done"]);
    // The phone moves the third one an hour later: same event, the first firing kept and not repeated.
    const v2 = calendar(
      ["UID:standup-1", "DTSTAMP:20260302T100000Z", "DTSTART:20260302T090000Z", "DURATION:PT15M", "RRULE:FREQ=DAILY;COUNT=3", "SUMMARY:Standup"],
      ["UID:standup-1", "DTSTAMP:20260302T100000Z", "RECURRENCE-ID:20260304T090000Z", "DTSTART:20260304T100000Z", "DURATION:PT15M", "SUMMARY:Standup"],
    );
    expect((await s.put("standup.ics", v2)).status).toBe(204);
    const [after] = await s.list();
    expect(after.id).toBe(before.id);
    expect(await s.walk(["2026-03-03T09:00:00Z", "2026-03-04T09:00:00Z", "2026-03-04T10:00:00Z"])).toEqual([
      "2026-03-02T09:00:00Z done",
      "2026-03-03T09:00:00Z done",
      "2026-03-04T10:00:00Z done",
    ]);
    const huge = await fetch(`${h!.url}/dav/calendars/alice/events/huge.ics`, { method: "PUT", body: "x".repeat(17 * 1024 * 1024), headers: { ...s.auth, "content-type": "text/calendar" } });
    expect(huge.status).toBe(413);
    expect(await huge.text()).toContain("max-resource-size");
  });

  test("series begun in 2000 are found, expanded and fired in 2026 across the clock changes and at a COUNT's end, an EXDATE either side of the jump", async () => {
    const s = await setup("2026-03-06T12:00:00Z");
    // 09:00 London every day since 2000; London goes to BST on 29 March 2026.
    const standup = calendar(["UID:standup-2000", "DTSTAMP:20000101T000000Z", "DTSTART;TZID=Europe/London:20000101T090000", "DURATION:PT30M", "RRULE:FREQ=DAILY", "SUMMARY:Standup"]);
    // 07:30 New York every day, COUNT ending on 10 March 2026 (two days after New York goes to EDT), one day left out in 2003 and one in 2026: COUNT counts them.
    const count = (Date.UTC(2026, 2, 10) - Date.UTC(2000, 0, 1)) / 86_400_000 + 1;
    const pills = calendar([
      "UID:pills-2000",
      "DTSTAMP:20000101T000000Z",
      "DTSTART;TZID=America/New_York:20000101T073000",
      "DURATION:PT5M",
      `RRULE:FREQ=DAILY;COUNT=${count}`,
      "EXDATE;TZID=America/New_York:20030704T073000",
      "EXDATE;TZID=America/New_York:20260309T073000",
      "SUMMARY:Pills",
    ]);
    expect((await s.put("standup.ics", standup)).status).toBe(201);
    expect((await s.put("pills.ics", pills)).status).toBe(201);
    const listed = await s.list();
    expect(listed.find((e) => e.title === "Standup")).toMatchObject({ next: "2026-03-07T09:00:00Z" });
    expect(listed.find((e) => e.title === "Pills")).toMatchObject({ next: "2026-03-06T07:30:00-05:00" });
    const expand = async (start: string, end: string) => {
      const r = await fetch(`${h!.url}/dav/calendars/alice/events/`, {
        method: "REPORT",
        headers: { ...s.auth, depth: "1", "content-type": "application/xml" },
        body: `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><c:calendar-data><c:expand start="${start}" end="${end}"/></c:calendar-data></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="${start}" end="${end}"/></c:comp-filter></c:comp-filter></c:filter></c:calendar-query>`,
      });
      expect(r.status).toBe(207);
      const xml = await r.text();
      // Each occurrence as its title and start.
      return [...xml.matchAll(/BEGIN:VEVENT[\s\S]*?END:VEVENT/g)].map((m) => `${/SUMMARY:(\w+)/.exec(m[0])![1]} ${/DTSTART:(\w+)/.exec(m[0])![1]}`).sort();
    };
    // New York's week: 12:30 UTC in EST, 11:30 in EDT from 8 March, the 9th left out, nothing after the 10th.
    const ny = (await expand("20260306T000000Z", "20260313T000000Z")).filter((o) => o.startsWith("Pills"));
    expect(ny).toEqual(["Pills 20260306T123000Z", "Pills 20260307T123000Z", "Pills 20260308T113000Z", "Pills 20260310T113000Z"]);
    // London's week: 09:00 UTC in GMT, 08:00 in BST from 29 March.
    const london = await expand("20260327T000000Z", "20260401T000000Z");
    expect(london).toEqual(["Standup 20260327T090000Z", "Standup 20260328T090000Z", "Standup 20260329T080000Z", "Standup 20260330T080000Z", "Standup 20260331T080000Z"]);
    // Busy where it fires, in BST.
    const free = await h!.call("events/free", { from: "2026-03-30T08:00:00+01:00", to: "2026-03-30T11:00:00+01:00", minutes: 30 }, { token: s.token });
    expect(free.body.result.slots).toEqual([{ start: "2026-03-30T09:30:00+01:00", end: "2026-03-30T11:00:00+01:00", minutes: 90 }]);
    expect(await s.walk(["2026-03-06T12:30:00Z", "2026-03-07T12:30:00Z", "2026-03-08T11:30:00Z", "2026-03-09T11:30:00Z", "2026-03-10T11:30:00Z", "2026-03-11T11:30:00Z", "2026-03-28T09:00:00Z", "2026-03-29T08:00:00Z", "2026-03-29T09:00:00Z"])).toEqual(
      expect.arrayContaining(["2026-03-06T12:30:00Z done", "2026-03-07T12:30:00Z done", "2026-03-08T11:30:00Z done", "2026-03-10T11:30:00Z done", "2026-03-28T09:00:00Z done", "2026-03-29T08:00:00Z done"]),
    );
    const fired = await s.walk([]);
    for (const not of ["2026-03-09T11:30:00Z", "2026-03-11T11:30:00Z", "2026-03-29T09:00:00Z"]) expect(fired.join(" ")).not.toContain(not);
    // The COUNT has ended: only the standup is still listed.
    expect((await s.list()).map((e) => e.title)).toEqual(["Standup"]);
  });
});
