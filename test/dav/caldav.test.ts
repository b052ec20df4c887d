// CalDAV driven by a real client (tsdav): discovery, create, change with
// If-Match, delete, sync after API changes, a client's own text kept byte for
// byte, reminders firing through the scheduler, and app passwords' scopes.
import { afterEach, describe, expect, test } from "bun:test";
import { calendarMultiGet, createDAVClient, type DAVCalendar } from "tsdav";
import { schedulerOf } from "../../core/scheduler/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { appleEvent, vevent } from "./fixtures.ts";
import { sqlAll, sqlGet } from "../sql.ts";

let h: Hearth | null = null;
afterEach(async () => {
  await h?.stop();
  h = null;
});

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;

async function client(hh: Hearth, token: string, user = "alice") {
  return createDAVClient({ serverUrl: `${hh.url}/`, credentials: { username: user, password: token }, authMethod: "Basic", defaultAccountType: "caldav" });
}

async function calendars(hh: Hearth, token: string) {
  const c = await client(hh, token);
  const cals = await c.fetchCalendars();
  const byName = (n: string) => cals.find((x) => x.displayName === n) as DAVCalendar;
  return { c, events: byName("Events"), tasks: byName("Tasks") };
}

describe("CalDAV", () => {
  test("discovers one calendar of events and one task list through /.well-known/caldav", async () => {
    h = await startHearth();
    const token = await h.token("alice");
    const wk = await fetch(`${h.url}/.well-known/caldav`, { redirect: "manual" });
    expect(wk.status).toBe(301);
    const { events, tasks } = await calendars(h, token);
    expect(events.url).toBe(`${h.url}/dav/calendars/alice/events/`);
    expect(events.components).toEqual(["VEVENT"]);
    expect(tasks.components).toEqual(["VTODO"]);
    const anon = await fetch(`${h.url}/dav/calendars/alice/`, { method: "PROPFIND", headers: { depth: "1" } });
    expect(anon.status).toBe(401);
    expect(anon.headers.get("www-authenticate")).toContain("Basic");
  });

  test("create, change with If-Match, delete: each through the events API, and a stale ETag is refused", async () => {
    const clock = new TestClock();
    h = await startHearth({ clock });
    const token = await h.token("alice");
    const { c, events } = await calendars(h, token);
    const made = await c.createCalendarObject({ calendar: events, filename: "standup.ics", iCalString: vevent("standup-1", "Standup", "20260302T090000Z") });
    expect(made.status).toBe(201);
    let listed = (await h.call("events/list", {}, { token })).body.result;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ title: "Standup", when: "2026-03-02T09:00:00Z", minutes: 45 });

    const [obj] = await c.fetchCalendarObjects({ calendar: events });
    expect(obj.url).toBe(`${events.url}standup.ics`);
    const changed = await c.updateCalendarObject({ calendarObject: { ...obj, data: vevent("standup-1", "Standup moved", "20260302T100000Z", ["RRULE:FREQ=DAILY"]) } });
    expect(changed.status).toBe(204);
    listed = (await h.call("events/list", {}, { token })).body.result;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ title: "Standup moved", when: "2026-03-02T10:00:00Z", repeat: "daily" });

    // The ETag the client had is gone: a second change from the old copy loses.
    const stale = await c.updateCalendarObject({ calendarObject: { ...obj, data: vevent("standup-1", "Lost", "20260302T110000Z") } });
    expect(stale.status).toBe(412);
    // A new object under a taken name with If-None-Match: * is refused too.
    const again = await c.createCalendarObject({ calendar: events, filename: "standup.ics", iCalString: vevent("x", "Dup", "20260302T090000Z") });
    expect(again.status).toBe(412);

    // What the API refuses, the client is refused with the precondition it shows (RFC 4791 5.3.2.1), naming the field.
    const task = vevent("b", "Bad", "20260302T090000Z").replace(/VEVENT/g, "VTODO");
    const bad = await c.createCalendarObject({ calendar: events, filename: "bad.ics", iCalString: task });
    expect(bad.status).toBe(403);
    expect(await bad.text()).toMatch(/<C:supported-calendar-component\/>|supported-calendar-component/);
    const garbled = await c.createCalendarObject({ calendar: events, filename: "g.ics", iCalString: "BEGIN:VCALENDAR\r\nnot a line\r\n" });
    expect(garbled.status).toBe(403);
    expect(await garbled.text()).toContain("valid-calendar-data");
    const untitled = await c.createCalendarObject({ calendar: events, filename: "u.ics", iCalString: vevent("u", "", "20260302T090000Z") });
    expect(untitled.status).toBe(403);
    const why = await untitled.text();
    expect(why).toContain("valid-calendar-data");
    expect(why).toContain("<d:responsedescription>title: ");
    expect((await h.call("events/list", {}, { token })).body.result).toHaveLength(1);

    // A change the API refuses leaves the event as it was: its removal and remaking are one write.
    const [current] = await c.fetchCalendarObjects({ calendar: events });
    const emptied = await c.updateCalendarObject({ calendarObject: { ...current, data: vevent("standup-1", "", "20260302T100000Z") } });
    expect(emptied.status).toBe(403);
    expect((await h.call("events/list", {}, { token })).body.result).toEqual(listed);
    const [still] = await c.fetchCalendarObjects({ calendar: events });
    expect(still.etag).toBe(current.etag);

    const [now] = await c.fetchCalendarObjects({ calendar: events });
    const gone = await c.deleteCalendarObject({ calendarObject: now });
    expect(gone.status).toBe(204);
    expect((await h.call("events/list", {}, { token })).body.result).toEqual([]);
  });

  test("an Apple Calendar event with RRULE, VALARM, VTIMEZONE and X-APPLE properties comes back byte for byte", async () => {
    const clock = new TestClock();
    h = await startHearth({ clock });
    const token = await h.token("alice");
    const url = `${h.url}/dav/calendars/alice/events/5C1B8A2E-7F3D-4E0A-9B61-2A4F0E9C3D17.ics`;
    const put = await fetch(url, { method: "PUT", body: appleEvent, headers: { authorization: basic("alice", token), "content-type": "text/calendar", "if-none-match": "*" } });
    expect(put.status).toBe(201);
    const got = await fetch(url, { headers: { authorization: basic("alice", token) } });
    expect(await got.text()).toBe(appleEvent);
    expect(got.headers.get("etag")).toBe(put.headers.get("etag"));
    // Read in its own zone: 09:30 London in March is 09:30 UTC, weekly.
    const [e] = (await h.call("events/list", {}, { token })).body.result;
    expect(e).toMatchObject({ title: "Pilates", when: "2026-03-03T09:30:00Z", minutes: 30, repeat: "weekly" });
  });

  test("an event made over CalDAV with a reminder fires on time through the scheduler", async () => {
    const clock = new TestClock(Date.parse("2026-03-01T12:00:00Z"));
    h = await startHearth({ clock });
    const token = await h.token("alice");
    const { c, events } = await calendars(h, token);
    const alarm = ["BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:Reminder", "TRIGGER:PT0S", "END:VALARM"];
    expect((await c.createCalendarObject({ calendar: events, filename: "call.ics", iCalString: vevent("call-1", "Call the bank", "20260301T123000Z", alarm) })).status).toBe(201);
    const [e] = (await h.call("events/list", {}, { token })).body.result;
    const ledger = async () => (await sqlAll<{ due: number; status: string }>(h!.rt, "SELECT due, status FROM schedule_firings WHERE ref = ?", e.id));
    clock.set(new Date(Date.parse("2026-03-01T12:30:00Z") - 1));
    await schedulerOf(h.rt).runDue();
    expect(await ledger()).toEqual([]);
    clock.set("2026-03-01T12:30:00Z");
    await schedulerOf(h.rt).runDue();
    expect(await ledger()).toEqual([{ due: Date.parse("2026-03-01T12:30:00Z"), status: "done" }]);
    const inbox = (await h.call("mail/inbox", {}, { token })).body.result;
    expect(JSON.stringify(inbox)).toContain("Reminder: Call the bank");
  });

  test("changes over the API reach the client's next sync: a new task, a changed one and a deleted event", async () => {
    const clock = new TestClock();
    h = await startHearth({ clock });
    const token = await h.token("alice");
    const { c, events, tasks } = await calendars(h, token);
    const first = (await h.call("tasks/create", { title: "Water plants" }, { token })).body.result;
    const ev = (await h.call("events/create", { title: "Dentist", when: "2026-03-05T15:00:00+01:00" }, { token })).body.result;
    const taskSync = await c.smartCollectionSync({ collection: { ...tasks, objectMultiGet: calendarMultiGet, objects: [] }, method: "webdav", detailedResult: true });
    expect(taskSync.objects.created).toHaveLength(1);
    const eventSync = await c.smartCollectionSync({ collection: { ...events, objectMultiGet: calendarMultiGet, objects: [] }, method: "webdav", detailedResult: true });
    expect(eventSync.objects.created).toHaveLength(1);

    const made = (await h.call("tasks/create", { title: "Pay rent", due: "2026-03-31 09:00", assignee: "agent" }, { token })).body.result;
    await h.call("tasks/update", { id: first.id, status: "doing" }, { token });
    await h.call("events/delete", { id: ev.id }, { token });

    const t2 = await c.smartCollectionSync({ collection: { ...tasks, objectMultiGet: calendarMultiGet, syncToken: taskSync.syncToken, objects: taskSync.objects.created }, method: "webdav", detailedResult: true });
    expect(t2.syncToken).not.toBe(taskSync.syncToken);
    expect(t2.objects.created).toHaveLength(1);
    expect(t2.objects.created[0].data).toContain("SUMMARY:Pay rent");
    expect(t2.objects.created[0].data).toContain("DUE:20260331T090000Z");
    expect(t2.objects.created[0].data).toContain("X-HEARTH-ASSIGNEE:agent");
    expect(t2.objects.created[0].data).toContain("STATUS:NEEDS-ACTION");
    expect(t2.objects.updated).toHaveLength(1);
    expect(t2.objects.updated[0].data).toContain("STATUS:IN-PROCESS");
    expect(made.id).toBeString();

    const e2 = await c.smartCollectionSync({ collection: { ...events, objectMultiGet: calendarMultiGet, syncToken: eventSync.syncToken, objects: eventSync.objects.created }, method: "webdav", detailedResult: true });
    expect(e2.objects.deleted).toHaveLength(1);
    expect(e2.objects.created).toHaveLength(0);
  });

  test("an event made over the API, changed in a client, keeps its repeat and its prompt", async () => {
    const clock = new TestClock();
    h = await startHearth({ clock });
    const token = await h.token("alice");
    const { c, events } = await calendars(h, token);
    await h.call("events/create", { title: "Rent", when: "2026-03-30T09:00:00+02:00", repeat: "monthly", prompt: "Check the bank balance." }, { token });
    const [obj] = await c.fetchCalendarObjects({ calendar: events });
    expect(obj.data).toContain("RRULE:FREQ=MONTHLY;BYMONTHDAY=30");
    expect(obj.data).toContain("RDATE");
    expect(obj.data).toContain("BEGIN:VALARM");
    const changed = await c.updateCalendarObject({ calendarObject: { ...obj, data: obj.data.replace("SUMMARY:Rent", "SUMMARY:Pay rent") } });
    expect(changed.status).toBe(204);
    const [e] = (await h.call("events/list", {}, { token })).body.result;
    expect(e).toMatchObject({ title: "Pay rent", when: "2026-03-30T09:00:00+02:00", repeat: "monthly", prompt: "Check the bank balance." });
  });

  test("a task's status from a client maps to the task's state, and back", async () => {
    const clock = new TestClock();
    h = await startHearth({ clock });
    const token = await h.token("alice");
    const { c, tasks } = await calendars(h, token);
    const todo = (status: string, due = "20260415T170000Z", more: string[] = []) =>
      ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Test//EN", "BEGIN:VTODO", "UID:t-1", "DTSTAMP:20260301T000000Z", "SUMMARY:File taxes", `DUE:${due}`, `STATUS:${status}`, ...more, "END:VTODO", "END:VCALENDAR", ""].join("\r\n");
    expect((await c.createCalendarObject({ calendar: tasks, filename: "t-1.ics", iCalString: todo("IN-PROCESS") })).status).toBe(201);
    let [t] = (await h.call("tasks/list", {}, { token })).body.result;
    expect(t).toMatchObject({ title: "File taxes", status: "doing", due: "2026-04-15T17:00:00.000Z" });
    const todos = async () => c.fetchCalendarObjects({ calendar: tasks, filters: [{ "comp-filter": { _attributes: { name: "VCALENDAR" }, "comp-filter": { _attributes: { name: "VTODO" } } } }] });
    expect(await c.fetchCalendarObjects({ calendar: tasks })).toEqual([]);
    const [obj] = await todos();
    expect((await c.updateCalendarObject({ calendarObject: { ...obj, data: todo("COMPLETED") } })).status).toBe(204);
    [t] = (await h.call("tasks/list", {}, { token })).body.result;
    expect(t.status).toBe("done");
    await h.call("tasks/update", { id: t.id, result: "filed online" }, { token });
    // A new due time and assignee from the client keep the task's state and result.
    const moved = await c.updateCalendarObject({ calendarObject: { ...(await todos())[0], data: todo("COMPLETED", "20260420T090000Z", ["X-HEARTH-ASSIGNEE:agent"]) } });
    expect(moved.status).toBe(204);
    const all = (await h.call("tasks/list", {}, { token })).body.result;
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ title: "File taxes", status: "done", result: "filed online", due: "2026-04-20T09:00:00.000Z", assignee: "agent" });
    expect((await todos()).map((o) => o.url)).toEqual([`${tasks.url}t-1.ics`]);
    const refused = await c.updateCalendarObject({ calendarObject: { ...(await todos())[0], data: todo("CANCELLED") } });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("<d:responsedescription>status: ");
  });

  test("an app password scoped to contacts cannot reach the calendar", async () => {
    h = await startHearth();
    const token = await h.token("alice", { scopes: ["contacts"] });
    const auth = { authorization: basic("alice", token) };
    const home = await fetch(`${h.url}/dav/calendars/alice/`, { method: "PROPFIND", headers: { ...auth, depth: "1" } });
    expect(home.status).toBe(207);
    expect(await home.text()).not.toContain("/events/");
    for (const [method, path] of [
      ["PROPFIND", "events/"],
      ["REPORT", "tasks/"],
      ["PUT", "events/x.ics"],
      ["GET", "events/x.ics"],
    ]) {
      const r = await fetch(`${h.url}/dav/calendars/alice/${path}`, { method, headers: { ...auth, depth: "1" }, body: method === "PUT" ? vevent("x", "X", "20260302T090000Z") : method === "REPORT" ? "<x/>" : undefined });
      expect(r.status).toBe(403);
    }
    expect((await h.call("events/list", {}, { token: await h.token("alice") })).body.result).toEqual([]);
    // Another account's calendar is not reachable either.
    const bob = await h.token("bob");
    const other = await fetch(`${h.url}/dav/calendars/alice/events/`, { method: "PROPFIND", headers: { authorization: basic("bob", bob), depth: "1" } });
    expect(other.status).toBe(403);
  });
});
