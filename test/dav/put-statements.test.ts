// A phone's first sync is thousands of PUTs of new events, each one write:
// the statements one takes are counted, so the work a new event does not need
// (a second write of what events/create just wrote, reading back the record
// the put made, the collection's revision read before it is raised, freeing a
// record no other name can hold yet) stays out of it. What it answers is the
// same: the ETag a GET gives, a sync that names it once. A change reads the
// event once, and each statement reaches its rows through an index, so a
// PUT costs the same in a calendar of 10,000 events as in one of 100.
import "../statements.ts";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "bun:test";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { ownStatements, statementLog } from "../statements.ts";
import { vevent } from "./fixtures.ts";

let h: Hearth | null = null;

afterEach(async () => {
  await h?.stop();
  h = null;
});

const series = (uid: string) =>
  ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Test//EN", "BEGIN:VEVENT", `UID:${uid}`, "DTSTAMP:20260301T000000Z", "DTSTART;TZID=Europe/London:20270302T090000", "DURATION:PT45M", "SUMMARY:Review", "RRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=6", "END:VEVENT", "END:VCALENDAR", ""].join("\r\n");

describe("a new event's PUT", () => {
  test("takes at most 10 statements on SQLite (12 on PostgreSQL, with its lock and the change notice sent with its COMMIT), BEGIN and COMMIT included, and its ETag is the one a GET gives", async () => {
    h = await startHearth({ clock: new TestClock() });
    const token = await h.token("alice");
    const auth = { authorization: `Basic ${Buffer.from(`alice:${token}`).toString("base64")}` };
    const dav = (method: string, name: string, body?: string, headers: Record<string, string> = {}) => fetch(`${h!.url}/dav/calendars/alice/events/${name}`, { method, body, headers: { ...auth, ...headers } });
    // The collection's state exists, as after a client's first look.
    expect((await dav("PUT", "first.ics", vevent("first", "First", "20270301T090000Z"), { "if-none-match": "*" })).status).toBe(201);
    const log = statementLog(h.rt.store);
    try {
      // PostgreSQL's two more: the collection's lock, and the change notice (pg_notify), which goes in the write's own
      // transaction with its COMMIT rather than as a transaction of its own after it.
      const most = h.rt.store.kind === "sqlite" ? 10 : 12;
      log.start();
      const plain = await dav("PUT", "plain.ics", vevent("plain", "Plain", "20270302T090000Z"), { "if-none-match": "*" });
      const plainStatements = ownStatements(log.stop());
      expect(plain.status).toBe(201);
      expect({ count: plainStatements.length, plainStatements }).toEqual({ count: Math.min(plainStatements.length, most), plainStatements });
      // A series in a zone keeps its rule, zone and length on the event: one write more, no more reads.
      log.start();
      const kept = await dav("PUT", "series.ics", series("series"), { "if-none-match": "*" });
      const seriesStatements = ownStatements(log.stop());
      expect(kept.status).toBe(201);
      expect({ count: seriesStatements.length, seriesStatements }).toEqual({ count: Math.min(seriesStatements.length, most + 2), seriesStatements });
      for (const [name, made] of [["plain.ics", plain], ["series.ics", kept]] as const) {
        const got = await dav("GET", name);
        expect(got.status).toBe(200);
        expect(got.headers.get("etag")).toBe(made.headers.get("etag"));
      }
    } finally {
      log.restore();
    }
    // The same UID under another name is still refused, naming the holder; nothing of it is kept.
    const again = await dav("PUT", "again.ics", vevent("plain", "Plain again", "20270303T090000Z"), { "if-none-match": "*" });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain("plain.ics");
    const listed = (await h.call("events/list", {}, { token })).body.result as { title: string }[];
    expect(listed.map((e) => e.title).sort()).toEqual(["First", "Plain", "Review"]);
    // A sync from nothing names each once.
    const sync = await dav("REPORT", "", `<d:sync-collection xmlns:d="DAV:"><d:sync-token/><d:prop><d:getetag/></d:prop></d:sync-collection>`);
    const hrefs = [...(await sync.text()).matchAll(/<d:href>[^<]*\/events\/([^<]+)<\/d:href>/g)].map((m) => m[1]).sort();
    expect(hrefs).toEqual(["first.ics", "plain.ics", "series.ics"]);
  });
});

/** How SQLite would reach the rows of each statement (its EXPLAIN QUERY PLAN), with every parameter a placeholder text. */
function plans(dir: string, statements: string[]): { statement: string; plan: string }[] {
  const db = new Database(join(dir, "hearth.db"), { readonly: true });
  try {
    return statements
      .filter((s) => !/^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i.test(s))
      .map((statement) => ({ statement, plan: (db.query(`EXPLAIN QUERY PLAN ${statement}`).all(...Array((statement.match(/\?/g) ?? []).length).fill("x")) as { detail: string }[]).map((p) => p.detail).join(" | ") }));
  } finally {
    db.close();
  }
}

describe("a change's PUT", () => {
  test("reads the event once, takes at most 16 statements on SQLite (18 on PostgreSQL), and on SQLite each reaches its rows by a whole key, whatever the calendar's size", async () => {
    h = await startHearth({ clock: new TestClock() });
    const token = await h.token("alice");
    const auth = { authorization: `Basic ${Buffer.from(`alice:${token}`).toString("base64")}` };
    const dav = (method: string, name: string, body?: string, headers: Record<string, string> = {}) => fetch(`${h!.url}/dav/calendars/alice/events/${name}`, { method, body, headers: { ...auth, ...headers } });
    // Others in the calendar, as a client's first sync leaves them: a lookup walking the calendar would show as a range in its plan.
    for (let i = 0; i < 3; i++) expect((await dav("PUT", `other-${i}.ics`, vevent(`other-${i}`, `Other ${i}`, `2027030${i + 1}T090000Z`), { "if-none-match": "*" })).status).toBe(201);
    const made = await dav("PUT", "standup.ics", vevent("standup", "Standup", "20270302T090000Z"), { "if-none-match": "*" });
    expect(made.status).toBe(201);
    const log = statementLog(h.rt.store);
    let statements: string[];
    let changed: Response;
    try {
      log.start();
      changed = await dav("PUT", "standup.ics", vevent("standup", "Standup moved", "20270302T100000Z"), { "if-match": made.headers.get("etag")! });
      statements = ownStatements(log.stop());
    } finally {
      log.restore();
    }
    expect(changed.status).toBe(204);
    // Moved to a new time, it is scheduled again: one write more than a change of its title.
    const most = h.rt.store.kind === "sqlite" ? 16 : 18;
    expect({ count: statements.length, statements }).toEqual({ count: Math.min(statements.length, most), statements });
    // The event's row is read once by the DAV layer (its If-Match), and events/create's new row once to be moved onto it.
    const eventReads = statements.filter((s) => /^select .* from "events_events"/i.test(s));
    expect({ reads: eventReads.length, eventReads }).toEqual({ reads: 2, eventReads });
    if (h.rt.store.kind === "sqlite") {
      // No statement walks a table or a range of an index: each finds its rows by the whole of a key.
      const wide = plans(h.dir, statements).filter((p) => /\bSCAN\b|[<>]\?\)|\(account=\? AND collection=\?\)/.test(p.plan));
      expect(wide).toEqual([]);
    }
    const got = await dav("GET", "standup.ics");
    expect(got.headers.get("etag")).toBe(changed.headers.get("etag"));
    expect(await got.text()).toContain("SUMMARY:Standup moved");
    const listed = (await h.call("events/list", {}, { token })).body.result as { title: string }[];
    expect(listed.map((e) => e.title).sort()).toEqual(["Other 0", "Other 1", "Other 2", "Standup moved"]);
  });
});
