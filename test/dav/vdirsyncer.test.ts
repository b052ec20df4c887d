// Two-way sync with vdirsyncer, a real sync client, against an instance on
// loopback: events, tasks and contacts go up from its folders, change over
// the API, and come back down with every line the client wrote still there
// apart from what changed; a change in its folder is made to the same record.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { prepareVdirsyncer } from "../prepare.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { fullCard, fullTodo, linesBut, vevent } from "./fixtures.ts";

const ready = prepareVdirsyncer();
if (!ready.ok) console.log(`skipping the vdirsyncer test: ${ready.reason}`);

const KINDS = [
  { pair: "events", type: "caldav", path: "calendars/alice/events/", ext: ".ics" },
  { pair: "tasks", type: "caldav", path: "calendars/alice/tasks/", ext: ".ics" },
  { pair: "contacts", type: "carddav", path: "addressbooks/alice/contacts/", ext: ".vcf" },
] as const;

describe.skipIf(!ready.ok)("vdirsyncer", () => {
  let h: Hearth;
  let dir: string;
  let token: string;
  beforeAll(async () => {
    h = await startHearth({ clock: new TestClock(Date.parse("2026-03-01T12:00:00Z")) });
    token = await h.token("alice");
    dir = mkdtempSync(join(tmpdir(), "hearth-vdirsyncer-"));
    const config = [`[general]`, `status_path = "${join(dir, "status")}/"`];
    for (const k of KINDS) {
      mkdirSync(join(dir, k.pair));
      config.push(
        "",
        `[pair ${k.pair}]`,
        `a = "${k.pair}_local"`,
        `b = "${k.pair}_hearth"`,
        "collections = null",
        "",
        `[storage ${k.pair}_local]`,
        `type = "filesystem"`,
        `path = "${join(dir, k.pair)}/"`,
        `fileext = "${k.ext}"`,
        "",
        `[storage ${k.pair}_hearth]`,
        `type = "${k.type}"`,
        `url = "${h.url}/dav/${k.path}"`,
        `username = "alice"`,
        `password = "${token}"`,
      );
    }
    writeFileSync(join(dir, "config"), `${config.join("\n")}\n`);
  });
  afterAll(async () => {
    await h?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Runs vdirsyncer on the test's config, answering yes to what it asks; its output when it fails. */
  async function vdirsyncer(...args: string[]) {
    const p = Bun.spawn(["vdirsyncer", "-c", join(dir, "config"), ...args], { stdin: new TextEncoder().encode("y\n".repeat(20)), stdout: "pipe", stderr: "pipe", env: { ...process.env, LANG: "C.UTF-8", LC_ALL: "C.UTF-8" } });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    expect({ args, code, out: code === 0 ? "" : out + err }).toEqual({ args, code: 0, out: "" });
  }
  const files = (pair: string) => readdirSync(join(dir, pair)).sort();
  const file = (pair: string, name: string) => readFileSync(join(dir, pair, name), "utf8");

  test("what the client holds keeps every line through a round trip with an API change between", async () => {
    const event = vevent("lunch-1", "Lunch with Bo", "20260305T120000Z", [
      "LOCATION:Canal St",
      "ATTENDEE;CN=Bo Chen;PARTSTAT=ACCEPTED:mailto:bo@example.org",
      "X-CLIENT-COLOUR:teal",
      "BEGIN:VALARM",
      "ACTION:DISPLAY",
      "DESCRIPTION:Reminder",
      "TRIGGER:-PT15M",
      "END:VALARM",
    ]);
    const todo = fullTodo("taxes-1");
    const card = fullCard("4.0", "urn:uuid:0b7e2c1d-5f3a-4c8e-9d21-7a6b5c4d3e2f");
    writeFileSync(join(dir, "events", "lunch-1.ics"), event);
    writeFileSync(join(dir, "tasks", "taxes-1.ics"), todo);
    writeFileSync(join(dir, "contacts", "ana.vcf"), card);

    await vdirsyncer("discover", "--no-list");
    await vdirsyncer("sync");
    const [ev] = (await h.call("events/list", {}, { token })).body.result;
    expect(ev).toMatchObject({ title: "Lunch with Bo", when: "2026-03-05T12:00:00Z", minutes: 45 });
    const [task] = (await h.call("tasks/list", {}, { token })).body.result;
    expect(task).toMatchObject({ title: "File taxes", status: "todo" });
    const [contact] = (await h.call("contacts/list", {}, { token })).body.result;
    expect(contact).toMatchObject({ name: "Ana Lima", email: "ana@home.example" });

    // Changes over the API: the event gets a new title, the task is done, the contact gets a new note and email, a new event.
    expect((await h.call("events/create", { id: ev.id, title: "Lunch with Bo and Di", when: ev.when, minutes: 45 }, { token })).status).toBe(200);
    await h.call("tasks/update", { id: task.id, status: "done" }, { token });
    await h.call("contacts/add", { name: "Ana Lima", note: "Prefers mornings", email: "ana@new.example" }, { token });
    await h.call("events/create", { title: "Dentist", when: "2026-03-06T15:00:00Z" }, { token });
    await vdirsyncer("sync");

    expect(files("events")).toHaveLength(2);
    // Only the title's line changed: the alarm, the attendee and the client's own property are as it wrote them.
    expect(file("events", "lunch-1.ics")).toBe(event.replace("\r\nSUMMARY:Lunch with Bo\r\n", "\r\nSUMMARY:Lunch with Bo and Di\r\n"));
    expect(files("tasks")).toEqual(["taxes-1.ics"]);
    const gotTodo = file("tasks", "taxes-1.ics");
    expect(linesBut(gotTodo, "STATUS", "COMPLETED", "DTSTAMP", "LAST-MODIFIED")).toEqual(linesBut(todo, "STATUS", "COMPLETED", "DTSTAMP", "LAST-MODIFIED"));
    expect(gotTodo).toContain("\r\nSTATUS:COMPLETED\r\n");
    expect(files("contacts")).toEqual(["ana.vcf"]);
    const gotCard = file("contacts", "ana.vcf");
    expect(linesBut(gotCard, "EMAIL", "NOTE", "REV")).toEqual(linesBut(card, "EMAIL", "NOTE", "REV"));
    expect(gotCard).toContain("\r\nEMAIL;TYPE=home;PREF=1:ana@new.example\r\n");
    expect(gotCard).toContain("\r\nEMAIL;TYPE=work:ana@work.example\r\n");
    expect(gotCard).toContain("\r\nNOTE:Prefers mornings\r\n");

    // A change in the client's folder goes up to the same records.
    writeFileSync(join(dir, "events", "lunch-1.ics"), event.replace("SUMMARY:Lunch with Bo", "SUMMARY:Lunch with Bo and Cy"));
    writeFileSync(join(dir, "tasks", "taxes-1.ics"), gotTodo.replace("PRIORITY:1", "PRIORITY:5"));
    writeFileSync(join(dir, "contacts", "ana.vcf"), gotCard.replace("\r\nFN:Ana Lima\r\n", "\r\nFN:Ana Lima-Okafor\r\n"));
    await vdirsyncer("sync");
    const events = (await h.call("events/list", {}, { token })).body.result;
    expect(events.find((e: { id: string }) => e.id === ev.id)).toMatchObject({ title: "Lunch with Bo and Cy" });
    expect((await h.call("tasks/list", {}, { token })).body.result).toMatchObject([{ id: task.id, status: "done" }]);
    expect((await h.call("contacts/list", {}, { token })).body.result).toMatchObject([{ id: contact.id, name: "Ana Lima-Okafor", email: "ana@new.example" }]);
    const task2 = await fetch(`${h.url}/dav/calendars/alice/tasks/${files("tasks")[0]}`, { headers: { authorization: `Basic ${Buffer.from(`alice:${token}`).toString("base64")}` } });
    expect(await task2.text()).toContain("\r\nPRIORITY:5\r\n");
  });
});
