// A person's export of all their data: a person makes records in each
// service, downloads /export signed in (and the owner runs `hearth export
// --user`), and the zip holds every one of them in an open format, read back
// here with the parsers a person's other programs would use: notes and
// documents as Markdown, events and tasks as iCalendar, contacts as vCard,
// files byte for byte, and JSON for every row each service keeps for them
// (a chat message, a blog post, an app).
// Someone else's records are not in it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { unzipSync } from "fflate";
import ICAL from "ical.js";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { startHearth, type Hearth } from "../harness.ts";

const MAIN = join(import.meta.dir, "..", "..", "core", "cli", "main.ts");
let h: Hearth;
let cookie: string;
let alice: string;
const bytes = crypto.getRandomValues(new Uint8Array(3000));

beforeAll(async () => {
  h = await startHearth({ env: { HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" } });
  const res = await fetch(`${h.url}/signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "alice", password: "a long passphrase" }) });
  expect(res.status).toBe(200);
  cookie = res.headers.get("set-cookie")!.split(";")[0];
  alice = await h.token("alice");
  const bob = await h.token("bob");
  const calls: [string, Record<string, unknown>, string?][] = [
    ["notes/add", { title: "groceries", text: "milk, eggs, bread" }],
    ["notes/add", { title: "Plans: 2026/Q1", text: "# Q1\n\n- tile the bathroom\n- plant *beans*" }],
    ["docs/write", { title: "Boiler manual", content: "# Boiler\n\nBleed the radiators each autumn." }],
    ["files/put", { name: "hello.txt", content: "hello, world" }],
    ["files/put", { name: "scan.bin", content: Buffer.from(bytes).toString("base64"), encoding: "base64", type: "application/octet-stream" }],
    ["events/create", { title: "Dentist", when: "2031-03-05T19:30:00Z", minutes: 45, note: "bring card" }],
    ["events/create", { title: "Yoga", when: "2031-03-07T08:00:00Z", minutes: 60 }],
    ["tasks/create", { title: "Renew passport", detail: "before June" }],
    ["contacts/add", { name: "Ada Lovelace", email: "ada@example.org", phone: "+44 20 7946 0000" }],
    ["contacts/add", { name: "Grace Hopper", email: "grace@example.org" }],
    ["chat/send", { room: "kitchen", content: "the kettle is fixed" }],
    ["blog/create", { title: "Balcony garden", content: "Tomatoes on the balcony, year two: the cherry ones did best, in the sun all afternoon." }],
    ["apps/create", { name: "Tip splitter", html: "<!doctype html><html><head><title>Tip splitter</title></head><body><p>Split the bill</p></body></html>" }],
    ["notes/add", { title: "bob's secret", text: "not alice's" }, bob],
  ];
  for (const [path, args, token] of calls) {
    const r = await h.call(path, args, { token: token ?? alice });
    expect({ path, status: r.status, body: r.status === 200 ? null : r.body }).toEqual({ path, status: 200, body: null });
  }
});
afterAll(() => h.stop());

const text = (zip: Record<string, Uint8Array>, name: string) => {
  expect(Object.keys(zip)).toContain(name);
  return new TextDecoder().decode(zip[name]);
};

/** Every component of a kind in the archive's iCalendar files of one service, parsed with ical.js. */
function components(zip: Record<string, Uint8Array>, service: string, kind: string) {
  return Object.keys(zip)
    .filter((n) => n.startsWith(`${service}/`) && n.endsWith(".ics"))
    .flatMap((n) => new ICAL.Component(ICAL.parse(text(zip, n))).getAllSubcomponents(kind));
}

function expectEverything(zip: Record<string, Uint8Array>) {
  const names = Object.keys(zip);
  // Markdown, named for the titles (a slash or colon in one still makes one file).
  expect(text(zip, "notes/groceries.md")).toBe("milk, eggs, bread");
  expect(text(zip, "notes/Plans- 2026-Q1.md")).toBe("# Q1\n\n- tile the bathroom\n- plant *beans*");
  expect(text(zip, "docs/Boiler manual.md")).toBe("# Boiler\n\nBleed the radiators each autumn.");
  // Files as they are.
  expect(text(zip, "files/hello.txt")).toBe("hello, world");
  expect(zip["files/scan.bin"]).toEqual(bytes);
  // iCalendar and vCard.
  const events = components(zip, "events", "vevent").map((c) => ({ summary: c.getFirstPropertyValue("summary"), start: String(c.getFirstPropertyValue("dtstart")) }));
  expect(events.map((e) => e.summary).sort()).toEqual(["Dentist", "Yoga"]);
  expect(events.find((e) => e.summary === "Dentist")!.start).toContain("2031-03-05");
  expect(components(zip, "tasks", "vtodo").map((c) => c.getFirstPropertyValue("summary"))).toEqual(["Renew passport"]);
  const cards = ICAL.parse(text(zip, "contacts/contacts.vcf"));
  const list = (Array.isArray(cards[0]) ? cards : [cards]) as unknown[];
  const people = list.map((c) => new ICAL.Component(c as never)).map((c) => ({ fn: c.getFirstPropertyValue("fn"), email: c.getFirstPropertyValue("email") }));
  expect(people.sort((a, b) => String(a.fn).localeCompare(String(b.fn)))).toEqual([
    { fn: "Ada Lovelace", email: "ada@example.org" },
    { fn: "Grace Hopper", email: "grace@example.org" },
  ]);
  // JSON for every row, in the services above and the rest (a chat message).
  expect(JSON.parse(text(zip, "notes/notes.json")).map((n: { title: string }) => n.title).sort()).toEqual(["Plans: 2026/Q1", "groceries"]);
  expect(JSON.parse(text(zip, "files/files_files.json"))).toHaveLength(2);
  expect(JSON.parse(text(zip, "chat/chat_messages.json"))).toMatchObject([{ room: "kitchen", content: "the kettle is fixed" }]);
  expect(JSON.parse(text(zip, "blog/blog_posts.json"))).toMatchObject([{ title: "Balcony garden", content: "Tomatoes on the balcony, year two: the cherry ones did best, in the sun all afternoon." }]);
  expect(JSON.parse(text(zip, "apps/apps.json"))).toMatchObject([{ name: "Tip splitter" }]);
  expect(JSON.parse(text(zip, "account.json"))).toMatchObject({ username: "alice" });
  // Nothing of bob's.
  for (const n of names) expect(new TextDecoder().decode(zip[n]).includes("not alice's")).toBe(false);
}

test("a signed-in person downloads everything of theirs from /export, each record in its open format", async () => {
  const res = await fetch(`${h.url}/export`, { headers: { cookie } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/zip");
  expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="hearth-alice-\d{4}-\d{2}-\d{2}\.zip"$/);
  expectEverything(unzipSync(new Uint8Array(await res.arrayBuffer())));
});

test("without a session /export sends a browser to sign in and a program gets 401", async () => {
  const page = await fetch(`${h.url}/export`, { redirect: "manual", headers: { accept: "text/html" } });
  expect(page.status).toBe(303);
  expect(page.headers.get("location")).toBe("/signin?next=%2Fexport");
  const api = await fetch(`${h.url}/export`, { headers: { accept: "application/json", authorization: `Bearer ${alice}` } });
  expect(api.status).toBe(401);
  expect((await api.json()).error.kind).toBe("unauthenticated");
});

test("`hearth export --user` writes the same archive for the owner of the machine", async () => {
  const out = join(h.dir, "..", `export-${crypto.randomUUID()}.zip`);
  try {
    const p = Bun.spawn(["bun", MAIN, "export", "--user", "alice", "--out", out], { env: { ...process.env, HEARTH_LOG: "off", HEARTH_CONFIG: "/dev/null", ...h.env }, stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ file: out });
    expectEverything(unzipSync(new Uint8Array(readFileSync(out))));
    const nobody = Bun.spawnSync(["bun", MAIN, "export", "--user", "nobody-here", "--out", out], { env: { ...process.env, HEARTH_LOG: "off", HEARTH_CONFIG: "/dev/null", ...h.env } });
    expect(nobody.exitCode).toBe(1);
    expect(nobody.stderr.toString()).toContain("no account");
  } finally {
    rmSync(out, { force: true });
  }
});
