// A client's record kept whole: changes over the API rewrite only the lines
// of what the service keeps, a change from a client is made to the record it
// names (same id, same firing history), and a UID names one resource per
// collection.
import { afterEach, describe, expect, test } from "bun:test";
import { schedulerOf } from "../../core/scheduler/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { sqlAll } from "../sql.ts";
import { fullCard, fullTodo, linesBut, vevent } from "./fixtures.ts";

let h: Hearth | null = null;
afterEach(async () => {
  await h?.stop();
  h = null;
});

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;

function dav(hh: Hearth, token: string) {
  const auth = { authorization: basic("alice", token) };
  return {
    put: (path: string, body: string, headers: Record<string, string> = {}) => fetch(`${hh.url}/dav/${path}`, { method: "PUT", body, headers: { ...auth, "content-type": "text/plain", ...headers } }),
    get: async (path: string) => {
      const res = await fetch(`${hh.url}/dav/${path}`, { headers: auth });
      expect(res.status).toBe(200);
      return { text: await res.text(), etag: res.headers.get("etag")! };
    },
  };
}

describe("a client's record kept whole", () => {
  test("a repeating task with one occurrence changed (RECURRENCE-ID) is kept byte for byte, and an API change touches only the series", async () => {
    h = await startHearth();
    const token = await h.token("alice");
    const d = dav(h, token);
    const sent = [
      "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Test Phone//EN",
      "BEGIN:VTODO", "UID:bins-1", "DTSTAMP:20260301T000000Z", "DTSTART:20260302T070000Z", "DUE:20260302T080000Z", "RRULE:FREQ=WEEKLY", "SUMMARY:Bins out", "PRIORITY:5", "STATUS:NEEDS-ACTION", "END:VTODO",
      "BEGIN:VTODO", "UID:bins-1", "DTSTAMP:20260301T000000Z", "RECURRENCE-ID:20260309T070000Z", "DTSTART:20260310T070000Z", "DUE:20260310T080000Z", "SUMMARY:Bins out (holiday)", "STATUS:COMPLETED", "END:VTODO",
      "END:VCALENDAR", "",
    ].join("\r\n");
    expect((await d.put("calendars/alice/tasks/bins.ics", sent, { "if-none-match": "*" })).status).toBe(201);
    expect((await d.get("calendars/alice/tasks/bins.ics")).text).toBe(sent);
    const [t] = (await h.call("tasks/list", {}, { token })).body.result;
    expect(t).toMatchObject({ title: "Bins out", status: "todo" });
    expect((await h.call("tasks/update", { id: t.id, status: "doing" }, { token })).status).toBe(200);
    const after = (await d.get("calendars/alice/tasks/bins.ics")).text;
    // The series' status changed; the changed occurrence, still COMPLETED, and every other line as sent.
    expect(linesBut(after, "STATUS", "DTSTAMP", "LAST-MODIFIED", "SEQUENCE")).toEqual(linesBut(sent, "STATUS", "DTSTAMP", "LAST-MODIFIED", "SEQUENCE"));
    expect(after.match(/STATUS:[A-Z-]+/g)).toEqual(["STATUS:IN-PROCESS", "STATUS:COMPLETED"]);
  });

  for (const version of ["4.0", "3.0"] as const)
    test(`a vCard ${version} with four emails, three phones, ORG, BDAY and a 150 KB photo keeps them through API changes`, async () => {
      h = await startHearth();
      const token = await h.token("alice");
      const d = dav(h, token);
      const sent = fullCard(version, "urn:uuid:6a1f0c3e-2b7d-4e59-9f0a-3c8d7e6b5a41");
      expect(sent.length).toBeGreaterThan(150_000);
      expect((await d.put("addressbooks/alice/contacts/ana.vcf", sent, { "if-none-match": "*" })).status).toBe(201);
      const [made] = (await h.call("contacts/list", {}, { token })).body.result;
      // The preferred email is the contact's own; the first phone is.
      expect(made).toMatchObject({ name: "Ana Lima", email: "ana@home.example", phone: version === "4.0" ? "+44-20-7946-0958" : "+44 20 7946 0958", note: "Met at the conference" });
      // The answers show every email and phone, the primary first.
      expect(made.emails).toEqual(["ana@home.example", "ana@work.example", "ana@club.example", "ana.lima@old.example"]);
      expect(made.phones).toEqual(version === "4.0" ? ["+44-20-7946-0958", "+44-20-7946-0000", "+44-161-496-0123"] : ["+44 20 7946 0958", "+44 20 7946 0000", "+44 161 496 0123"]);
      expect((await h.call("contacts/find", { query: "club.example" }, { token })).body.result.map((x: { id: string }) => x.id)).toEqual([made.id]);

      // The name (in another case) and the note change over the API.
      const renamed = (await h.call("contacts/add", { name: "ANA LIMA", note: "Prefers mornings" }, { token })).body.result;
      expect(renamed).toMatchObject({ id: made.id, name: "ANA LIMA", updated_existing: true });
      const first = await d.get("addressbooks/alice/contacts/ana.vcf");
      expect(linesBut(first.text, "FN", "N", "NOTE", "REV")).toEqual(linesBut(sent, "FN", "N", "NOTE", "REV"));
      expect(first.text).toContain(`VERSION:${version}\r\n`);
      expect(first.text).toContain("\r\nFN:ANA LIMA\r\n");
      expect(first.text).toContain("\r\nN:LIMA;ANA;;Dr.;\r\n");
      expect(first.text).toContain("\r\nNOTE:Prefers mornings\r\n");
      expect(first.text).not.toContain("REV:20260228T101500Z");

      // The primary email changes: that line's value alone, its parameters as the client wrote them.
      await h.call("contacts/add", { name: "Ana Lima", email: "ana@new.example", phone: "+44 7700 900123" }, { token });
      const second = await d.get("addressbooks/alice/contacts/ana.vcf");
      expect(second.etag).not.toBe(first.etag);
      expect(linesBut(second.text, "FN", "N", "EMAIL", "TEL", "REV")).toEqual(linesBut(first.text, "FN", "N", "EMAIL", "TEL", "REV"));
      const emails = second.text.split("\r\n").filter((l) => /^(item1\.)?EMAIL/.test(l));
      expect(emails).toEqual([
        "EMAIL;TYPE=work:ana@work.example",
        version === "4.0" ? "EMAIL;TYPE=home;PREF=1:ana@new.example" : "EMAIL;TYPE=INTERNET,HOME,pref:ana@new.example",
        "item1.EMAIL;TYPE=INTERNET:ana@club.example",
        "EMAIL;TYPE=other:ana.lima@old.example",
      ]);
      const tels = second.text.split("\r\n").filter((l) => l.startsWith("TEL"));
      expect(tels).toEqual(
        version === "4.0"
          ? ['TEL;VALUE=uri;TYPE="cell,voice":tel:+44-7700-900123', "TEL;VALUE=uri;TYPE=work:tel:+44-20-7946-0000", "TEL;VALUE=uri;TYPE=home:tel:+44-161-496-0123"]
          : ["TEL;TYPE=CELL,VOICE:+44 7700 900123", "TEL;TYPE=WORK:+44 20 7946 0000", "TEL;TYPE=HOME:+44 161 496 0123"],
      );
      // Read back, the card says what the contact holds.
      const [now] = (await h.call("contacts/list", {}, { token })).body.result;
      expect(now).toMatchObject({ id: made.id, name: "Ana Lima", email: "ana@new.example", note: "Prefers mornings" });
      expect(now.emails).toEqual(["ana@new.example", "ana@work.example", "ana@club.example", "ana.lima@old.example"]);

      // Renamed in the client, the card stays the same contact.
      const moved = second.text.replace("\r\nFN:Ana Lima\r\n", "\r\nFN:Ana Lima-Okafor\r\n");
      expect((await d.put("addressbooks/alice/contacts/ana.vcf", moved, { "if-match": second.etag })).status).toBe(204);
      const all = (await h.call("contacts/list", {}, { token })).body.result;
      expect(all).toHaveLength(1);
      expect(all[0]).toMatchObject({ id: made.id, name: "Ana Lima-Okafor", email: "ana@new.example" });
      expect((await d.get("addressbooks/alice/contacts/ana.vcf")).text).toBe(moved);
    });

  for (const version of ["4.0", "3.0"] as const)
    test(`a vCard ${version}'s emails and phones edited as lists over the API: only the lines changed are rewritten`, async () => {
      h = await startHearth();
      const token = await h.token("alice");
      const d = dav(h, token);
      const sent = fullCard(version, "urn:uuid:0b6f3c1e-7d2a-4f59-8e0a-1c8d7e6b5a42");
      expect((await d.put("addressbooks/alice/contacts/ana.vcf", sent, { "if-none-match": "*" })).status).toBe(201);
      const [made] = (await h.call("contacts/list", {}, { token })).body.result;
      // The kinds the card gives, the primary first, as the screens show them.
      expect(made.email_types).toEqual(["home", "work", "", "other"]);
      expect(made.phone_types).toEqual(["cell", "work", "home"]);

      // A note alone changes NOTE and REV alone: the lists are left as the card has them.
      await h.call("contacts/add", { name: "Ana Lima", note: "Lists next" }, { token });
      const noted = await d.get("addressbooks/alice/contacts/ana.vcf");
      expect(linesBut(noted.text, "NOTE", "REV")).toEqual(linesBut(sent, "NOTE", "REV"));

      // The club address corrected, the old one dropped, a new one added; the home phone is now a cell.
      const phones = made.phones as string[];
      const r = await h.call(
        "contacts/add",
        {
          name: "Ana Lima",
          emails: [{ value: "ana@home.example", type: "home" }, { value: "ana@work.example", type: "work" }, { value: "ana@club.example.org" }, { value: "ana@new.example", type: "work" }],
          phones: [{ value: phones[0], type: "cell" }, { value: phones[1], type: "work" }, { value: phones[2], type: "cell" }],
        },
        { token },
      );
      expect(r.status).toBe(200);
      expect(r.body.result).toMatchObject({ id: made.id, email: "ana@home.example", emails: ["ana@home.example", "ana@work.example", "ana@club.example.org", "ana@new.example"], email_types: ["home", "work", "", "work"], phone_types: ["cell", "work", "cell"] });
      const { text } = await d.get("addressbooks/alice/contacts/ana.vcf");
      // Every other line (the photo, ORG, ADR, the club's label, the name, the note) byte for byte.
      expect(linesBut(text, "EMAIL", "TEL", "REV")).toEqual(linesBut(noted.text, "EMAIL", "TEL", "REV"));
      const lines = (re: RegExp) => text.split("\r\n").filter((l) => re.test(l));
      expect(lines(/^(item1\.)?EMAIL/)).toEqual([
        "EMAIL;TYPE=work:ana@work.example",
        version === "4.0" ? "EMAIL;TYPE=home;PREF=1:ana@home.example" : "EMAIL;TYPE=INTERNET,HOME,pref:ana@home.example",
        "item1.EMAIL;TYPE=INTERNET:ana@club.example.org",
        "EMAIL;TYPE=work:ana@new.example",
      ]);
      expect(lines(/^TEL/)).toEqual(
        version === "4.0"
          ? ['TEL;VALUE=uri;TYPE="cell,voice":tel:+44-20-7946-0958', "TEL;VALUE=uri;TYPE=work:tel:+44-20-7946-0000", "TEL;VALUE=uri;TYPE=cell:tel:+44-161-496-0123"]
          : ["TEL;TYPE=CELL,VOICE:+44 20 7946 0958", "TEL;TYPE=WORK:+44 20 7946 0000", "TEL;TYPE=cell:+44 161 496 0123"],
      );
      // The client sending back what it read changes nothing; phones [] removes every number and nothing else.
      expect((await d.put("addressbooks/alice/contacts/ana.vcf", text)).status).toBe(204);
      expect((await d.get("addressbooks/alice/contacts/ana.vcf")).text).toBe(text);
      await h.call("contacts/add", { name: "Ana Lima", phones: [] }, { token });
      const bare = await d.get("addressbooks/alice/contacts/ana.vcf");
      expect(linesBut(bare.text, "TEL", "REV")).toEqual(linesBut(text, "TEL", "REV"));
      expect(bare.text).not.toContain("TEL");
      const [now] = (await h.call("contacts/list", {}, { token })).body.result;
      expect(now.phone).toBe(null);
      expect(now.phones).toBeUndefined();
    });

  test("a card written with bare LF line ends and no note gets the note added, its other lines and line ends kept", async () => {
    h = await startHearth();
    const token = await h.token("alice");
    const d = dav(h, token);
    const sent = ["BEGIN:VCARD", "VERSION:3.0", "UID:lf-1", "FN:Cy Okafor", "N:Okafor;Cy;;;", "item2.TEL;type=pref:+1 555 0100", "item2.X-ABLabel:_$!<Mobile>!$_", "TEL:+1 555 0199", "END:VCARD", ""].join("\n");
    expect((await d.put("addressbooks/alice/contacts/cy.vcf", sent)).status).toBe(201);
    const [c] = (await h.call("contacts/list", {}, { token })).body.result;
    expect(c).toMatchObject({ name: "Cy Okafor", phone: "+1 555 0100" });
    await h.call("contacts/add", { name: "Cy Okafor", note: "Two lines,\nboth kept" }, { token });
    const { text } = await d.get("addressbooks/alice/contacts/cy.vcf");
    expect(text).toBe(sent.replace("END:VCARD", "NOTE:Two lines\\,\\nboth kept\nEND:VCARD"));
  });

  test("a task with PRIORITY and an alarm, marked done over the API, keeps them", async () => {
    const clock = new TestClock(Date.parse("2026-03-02T10:00:00Z"));
    h = await startHearth({ clock });
    const token = await h.token("alice");
    const d = dav(h, token);
    const sent = fullTodo("todo-7");
    expect((await d.put("calendars/alice/tasks/todo-7.ics", sent)).status).toBe(201);
    const [t] = (await h.call("tasks/list", {}, { token })).body.result;
    expect((await h.call("tasks/update", { id: t.id, status: "done" }, { token })).status).toBe(200);
    const { text } = await d.get("calendars/alice/tasks/todo-7.ics");
    expect(linesBut(text, "STATUS", "COMPLETED", "DTSTAMP", "LAST-MODIFIED")).toEqual(linesBut(sent, "STATUS", "COMPLETED", "DTSTAMP", "LAST-MODIFIED"));
    expect(text).toContain("\r\nPRIORITY:1\r\n");
    expect(text).toContain("\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER;RELATED=END:-PT1H\r\n");
    expect(text).toContain("\r\nSTATUS:COMPLETED\r\n");
    expect(text).toContain("\r\nCOMPLETED:20260302T100000Z\r\n");
    expect(text).toContain("\r\nLAST-MODIFIED:20260302T100000Z\r\n");

    // A new due time from the client is made to the same task, which keeps its state.
    clock.advance(60_000);
    const later = text.replace("DUE:20260415T170000Z", "DUE:20260420T090000Z");
    expect((await d.put("calendars/alice/tasks/todo-7.ics", later)).status).toBe(204);
    const all = (await h.call("tasks/list", {}, { token })).body.result;
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ id: t.id, status: "done", due: "2026-04-20T09:00:00.000Z" });
    expect((await d.get("calendars/alice/tasks/todo-7.ics")).text).toBe(later);
  });

  test("an event changed by a client keeps its id and history, and an occurrence that fired does not fire again", async () => {
    const clock = new TestClock(Date.parse("2026-03-01T12:00:00Z"));
    h = await startHearth({ clock });
    const token = await h.token("alice");
    const d = dav(h, token);
    const more = ["LOCATION:Branch on King St", "ATTENDEE;CN=Bo Chen;PARTSTAT=ACCEPTED:mailto:bo@example.org", "X-CLIENT-COLOUR:teal", "BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:Reminder", "TRIGGER:-PT10M", "END:VALARM"];
    const path = "calendars/alice/events/call.ics";
    expect((await d.put(path, vevent("call-1", "Call the bank", "20260301T123000Z", more))).status).toBe(201);
    const [e] = (await h.call("events/list", {}, { token })).body.result;
    const ledger = async () => (await sqlAll<{ due: number; status: string }>(h!.rt, "SELECT due, status FROM schedule_firings WHERE ref = ? ORDER BY due", e.id));
    const reminders = async () => JSON.stringify((await h!.call("mail/inbox", {}, { token })).body.result).split("Reminder: Call the bank").length - 1;
    clock.set("2026-03-01T12:30:00Z");
    await schedulerOf(h.rt).runDue();
    expect(await ledger()).toEqual([{ due: Date.parse("2026-03-01T12:30:00Z"), status: "done" }]);
    expect(await reminders()).toBe(1);

    // A new title, the same start: the same event, its firing remembered, nothing fired again.
    clock.set("2026-03-01T12:31:00Z");
    const retitled = vevent("call-1", "Call the bank again", "20260301T123000Z", more);
    expect((await d.put(path, retitled, { "if-match": (await d.get(path)).etag })).status).toBe(204);
    let [now] = (await h.call("events/list", {}, { token })).body.result;
    expect(now).toMatchObject({ id: e.id, title: "Call the bank again" });
    expect(now.history).toMatchObject([{ at: "2026-03-01T12:30:00Z", status: "done" }]);
    await schedulerOf(h.rt).runDue();
    expect(await ledger()).toHaveLength(1);
    expect(await reminders()).toBe(1);
    expect((await d.get(path)).text).toBe(retitled);

    // Moved to a later start: it fires there, once, and still remembers the first firing.
    const moved = vevent("call-1", "Call the bank again", "20260301T130000Z", more);
    expect((await d.put(path, moved)).status).toBe(204);
    [now] = (await h.call("events/list", {}, { token })).body.result;
    expect(now).toMatchObject({ id: e.id, when: "2026-03-01T13:00:00Z" });
    clock.set("2026-03-01T13:00:00Z");
    await schedulerOf(h.rt).runDue();
    await schedulerOf(h.rt).runDue();
    expect(await ledger()).toEqual([
      { due: Date.parse("2026-03-01T12:30:00Z"), status: "done" },
      { due: Date.parse("2026-03-01T13:00:00Z"), status: "done" },
    ]);
    expect(await reminders()).toBe(2);
  });

  test("a second resource with a UID another holds is refused with no-uid-conflict naming the holder", async () => {
    h = await startHearth({ clock: new TestClock(Date.parse("2026-03-01T12:00:00Z")) });
    const token = await h.token("alice");
    const d = dav(h, token);
    const cases = [
      { col: "calendars/alice/events/", ns: "urn:ietf:params:xml:ns:caldav", a: vevent("same-uid", "Standup", "20260302T090000Z"), b: vevent("same-uid", "Retro", "20260303T090000Z"), list: "events/list" },
      { col: "calendars/alice/tasks/", ns: "urn:ietf:params:xml:ns:caldav", a: fullTodo("same-uid"), b: fullTodo("same-uid").replace("SUMMARY:File taxes", "SUMMARY:Pay rent"), list: "tasks/list" },
      { col: "addressbooks/alice/contacts/", ns: "urn:ietf:params:xml:ns:carddav", a: fullCard("3.0", "same-uid"), b: fullCard("3.0", "same-uid", "Bo Chen"), list: "contacts/list" },
    ];
    for (const c of cases) {
      const ext = c.col.includes("contacts") ? ".vcf" : ".ics";
      expect((await d.put(`${c.col}a${ext}`, c.a)).status).toBe(201);
      const dup = await d.put(`${c.col}b${ext}`, c.b);
      expect(dup.status).toBe(409);
      const body = await dup.text();
      expect(body).toContain(`xmlns:${c.ns.endsWith("caldav") ? "c" : "card"}="${c.ns}"`);
      expect(body).toMatch(/<(c|card):no-uid-conflict><d:href>[^<]*<\/d:href><\/\1:no-uid-conflict>/);
      expect(body).toContain(`<d:href>/dav/${c.col}a${ext}</d:href>`);
      // Nothing of the refused one was kept.
      expect((await h.call(c.list, {}, { token })).body.result).toHaveLength(1);
      expect((await fetch(`${h.url}/dav/${c.col}b${ext}`, { headers: { authorization: basic("alice", token) } })).status).toBe(404);
    }
  });
});
