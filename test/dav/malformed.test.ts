// What a broken or hostile client sends gets a 4xx saying what is wrong, never
// a 500, and changes nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { vevent } from "./fixtures.ts";

let h: Hearth;
let auth: string;
let token: string;
beforeAll(async () => {
  h = await startHearth({ clock: new TestClock() });
  token = await h.token("alice");
  auth = `Basic ${Buffer.from(`alice:${token}`).toString("base64")}`;
});
afterAll(() => h.stop());

const req = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
  fetch(`${h.url}/dav/${path}`, { method, body, headers: { authorization: auth, ...headers } });

describe("DAV requests that are wrong", () => {
  test("bodies that are not what they claim are refused naming the field: 400 for XML, the precondition a client shows for a PUT", async () => {
    const override = vevent("a", "A", "20260302T090000Z").replace(/[\s\S]*?(BEGIN:VEVENT[\s\S]*END:VEVENT\r\n)[\s\S]*/, "$1").replace("SUMMARY:A", "RECURRENCE-ID:20260303T090000Z\r\nSUMMARY:A");
    // [method, path, body, field, precondition (PUT: RFC 4791 and 6352 5.3.2.1 / 6.3.2.1)]
    const cases: [string, string, string, string, string?][] = [
      ["PROPFIND", "calendars/alice/events/", "<d:propfind xmlns:d='DAV:'><d:prop>", "body"],
      ["REPORT", "calendars/alice/events/", "not xml at all <", "body"],
      ["PUT", "calendars/alice/events/a.ics", "hello", "body", "valid-calendar-data"],
      ["PUT", "calendars/alice/events/a.ics", "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n", "body", "supported-calendar-component"],
      ["PUT", "calendars/alice/events/a.ics", vevent("a", "A", "20260302T090000Z").replace(/DTSTART[^\r]*\r\n/, ""), "body", "valid-calendar-data"],
      ["PUT", "calendars/alice/events/a.ics", vevent("a", "A", "20260302T090000Z").replace("DURATION:PT45M", "DURATION:-PT45M"), "minutes", "valid-calendar-data"],
      ["PUT", "calendars/alice/events/a.ics", vevent("a", "A", "20260302T090000Z") + vevent("a", "A", "20260302T090000Z"), "body", "valid-calendar-data"],
      // Every five minutes for ever, and every second a hundred times: each would keep the scheduler firing.
      ["PUT", "calendars/alice/events/a.ics", vevent("a", "A", "20260302T090000Z").replace("DURATION:PT45M", "DURATION:PT1M\r\nRRULE:FREQ=MINUTELY;INTERVAL=5"), "RRULE", "valid-calendar-data"],
      ["PUT", "calendars/alice/events/a.ics", vevent("a", "A", "20260302T090000Z").replace("DURATION:PT45M", "DURATION:PT1M\r\nRRULE:FREQ=SECONDLY;COUNT=100"), "RRULE", "valid-calendar-data"],
      // Changed occurrences with no series to belong to, and two series in one object.
      ["PUT", "calendars/alice/events/a.ics", vevent("a", "A", "20260302T090000Z").replace(/BEGIN:VEVENT[\s\S]*END:VEVENT\r\n/, override), "body", "valid-calendar-data"],
      ["PUT", "calendars/alice/events/a.ics", vevent("a", "A", "20260302T090000Z").replace("END:VCALENDAR", vevent("b", "B", "20260302T090000Z").replace(/[\s\S]*?(BEGIN:VEVENT[\s\S]*END:VEVENT\r\n)[\s\S]*/, "$1") + "END:VCALENDAR"), "body", "valid-calendar-data"],
      ["PUT", "addressbooks/alice/contacts/a.vcf", "BEGIN:VCARD\r\nVERSION:3.0\r\nEND:VCARD\r\n", "name", "valid-address-data"],
      ["PUT", "addressbooks/alice/contacts/a.vcf", vevent("a", "A", "20260302T090000Z"), "body", "valid-address-data"],
      ["PUT", "calendars/alice/events/", vevent("a", "A", "20260302T090000Z"), ""],
    ];
    for (const [method, path, body, field, pre] of cases) {
      const r = await req(method, path, body);
      const text = await r.text();
      expect({ path, body: body.slice(0, 40), status: r.status }).toEqual({ path, body: body.slice(0, 40), status: pre ? 403 : field ? 400 : 405 });
      expect(text).not.toContain("    at ");
      if (pre) {
        expect(text).toContain(`:${pre}/>`);
        if (field !== "body") expect(text).toContain(`<d:responsedescription>${field}: `);
      } else if (field) expect(JSON.parse(text).error.field).toBe(field);
    }
    expect((await h.call("events/list", {}, { token })).body.result).toEqual([]);
    expect((await h.call("contacts/list", {}, { token })).body.result).toEqual([]);
  });

  test("a rule more often than hourly is kept when a short COUNT ends it, and its refusal says why", async () => {
    const few = vevent("pomodoro", "Pomodoro", "20260302T090000Z").replace("DURATION:PT45M", "DURATION:PT25M\r\nRRULE:FREQ=MINUTELY;INTERVAL=30;COUNT=4");
    expect((await req("PUT", "calendars/alice/events/pomodoro.ics", few, { "content-type": "text/calendar" })).status).toBe(201);
    const many = await req("PUT", "calendars/alice/events/tick.ics", few.replace("COUNT=4", "COUNT=1000").replaceAll("pomodoro", "tick"));
    expect(many.status).toBe(403);
    expect(await many.text()).toMatch(/RRULE: RRULE FREQ=MINUTELY repeats every minute: each occurrence fires a reminder/);
    await req("DELETE", "calendars/alice/events/pomodoro.ics");
  });

  test("unknown places, reports, sync tokens and methods are refused as such", async () => {
    expect((await req("PROPFIND", "calendars/alice/nonesuch/", undefined, { depth: "0" })).status).toBe(404);
    expect((await req("PROPFIND", "elsewhere/", undefined, { depth: "0" })).status).toBe(404);
    expect((await req("GET", "calendars/alice/events/missing.ics")).status).toBe(404);
    expect((await req("DELETE", "calendars/alice/events/missing.ics")).status).toBe(404);
    expect((await req("MKCALENDAR", "calendars/alice/new/")).status).toBe(405);
    expect((await req("GET", "calendars/alice/events/%E0%A4%A.ics")).status).toBe(400);
    expect((await req("PUT", `calendars/alice/events/${"n".repeat(300)}.ics`, vevent("a", "A", "20260302T090000Z"))).status).toBe(400);
    const report = await req("REPORT", "calendars/alice/events/", "<x:free-busy-query xmlns:x='urn:ietf:params:xml:ns:caldav'/>");
    expect(report.status).toBe(403);
    expect(await report.text()).toContain("supported-report");
    const sync = await req("REPORT", "calendars/alice/events/", "<d:sync-collection xmlns:d='DAV:'><d:sync-token>urn:hearth:sync:999</d:sync-token><d:prop><d:getetag/></d:prop></d:sync-collection>");
    expect(sync.status).toBe(403);
    expect(await sync.text()).toContain("valid-sync-token");
  });

  test("a property nobody serves is answered 404 in its own namespace, beside those found", async () => {
    const r = await req("PROPFIND", "calendars/alice/events/", "<propfind xmlns='DAV:' xmlns:z='urn:example:z'><prop><displayname/><z:colour/></prop></propfind>", { depth: "0" });
    expect(r.status).toBe(207);
    const text = await r.text();
    expect(text).toContain("<d:displayname>Events</d:displayname>");
    expect(text).toContain('<x:colour xmlns:x="urn:example:z"/>');
    expect(text).toContain("HTTP/1.1 404 Not Found");
  });
});
