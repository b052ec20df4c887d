// Write calls fired at once, through the HTTP API, at one instance: on
// PostgreSQL they run side by side, so each write that reads, then writes
// what it read must still answer as if the calls had come one at a time.
// `HEARTH_TEST_DB=pg bun test test/concurrency/plugins-a.test.ts` runs them
// there; on SQLite, whose writes take turns, the same answers hold.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { answerOf, startHearth, type CallResult, type Hearth } from "../harness.ts";

let h: Hearth;
const N = 16;

beforeAll(async () => {
  // Enough connections that several writes really run at once (the harness gives each instance a small pool).
  h = await startHearth({ env: process.env.HEARTH_TEST_DB === "pg" ? { HEARTH_DATABASE_POOL: "16" } : {} });
});
afterAll(() => h.stop());

const times = <T,>(n: number, f: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => f(i)));
const statuses = (rs: { status: number }[]) => rs.map((r) => r.status).sort((a, b) => a - b);
const count = (rs: { status: number }[], status: number) => rs.filter((r) => r.status === status).length;
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const post = async (path: string, token: string, body?: unknown): Promise<CallResult> => {
  return answerOf(await fetch(`${h.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...as(token) }, body: body === undefined ? undefined : JSON.stringify(body) }));
};
const html = "<!doctype html><html><head><title>T</title></head><body><p>t</p></body></html>";

test("apps/create of one slug at once: one app, every other call the same 409", async () => {
  const t = await h.token("apps-slug");
  const rs = await times(N, (i) => h.call("apps/create", { name: `Race ${i}`, slug: "race", html }, { token: t }));
  expect(count(rs, 200)).toBe(1);
  expect(count(rs, 409)).toBe(N - 1);
  for (const r of rs.filter((r) => r.status === 409)) expect(r.body.error.message).toBe('the slug "race" is taken');
  const won = rs.find((r) => r.status === 200)!.body.result.name;
  expect((await h.call("apps/read", { slug: "race" })).body.result.name).toBe(won);
});

test("apps/create and apps/fork of one name at once: each gets a slug of its own", async () => {
  const t = await h.token("apps-name");
  const made = await times(N, () => h.call("apps/create", { name: "Same Name", html }, { token: t }));
  expect(statuses(made)).toEqual(Array(N).fill(200));
  const slugs = new Set(made.map((r) => r.body.result.slug));
  expect(slugs.size).toBe(N);
  expect(slugs.has("same-name")).toBe(true);
  const forked = await times(N, () => h.call("apps/fork", { slug: "same-name" }, { token: t }));
  expect(statuses(forked)).toEqual(Array(N).fill(200));
  expect(new Set(forked.map((r) => r.body.result.slug)).size).toBe(N);
  const taken = await times(N, () => h.call("apps/fork", { slug: "same-name", new_slug: "one-fork" }, { token: t }));
  expect(count(taken, 200)).toBe(1);
  expect(count(taken, 409)).toBe(N - 1);
});

test("an app's store keeps at most 1,000 keys a person, however many sets arrive at once", async () => {
  const t = await h.token("apps-store");
  expect((await h.call("apps/create", { name: "Keeper", slug: "keeper", html }, { token: t })).status).toBe(200);
  expect((await post("/apps/keeper/allow", t, { method: "hearth.store" })).status).toBe(200);
  const app = (await h.row<{ id: string }>("SELECT id FROM apps WHERE slug = ?", "keeper"))!.id;
  const account = (await h.row<{ id: string }>("SELECT id FROM accounts WHERE username = ?", "apps-store"))!.id;
  // 995 keys already kept: room for five more.
  const rows = Array.from({ length: 995 }, (_, i) => [app, account, `old-${i}`, "1", 0]);
  await h.exec(`INSERT INTO apps_store (app, account, key, value, updated) VALUES ${rows.map(() => "(?, ?, ?, ?, ?)").join(", ")}`, ...rows.flat());
  const rs = await times(N, (i) => post("/apps/keeper/store", t, { op: "set", key: `new-${i}`, value: i }));
  expect(count(rs, 200)).toBe(5);
  expect(count(rs, 413)).toBe(N - 5);
  expect((await h.row<{ n: number }>("SELECT count(*) AS n FROM apps_store WHERE app = ? AND account = ?", app, account))!.n).toBe(1000);
});

test("contacts/add of one name at once: one contact, and every field some call gave is kept", async () => {
  const t = await h.token("contacts-race");
  const rs = await times(N, (i) => h.call("contacts/add", i % 2 ? { name: "Ada Lovelace", email: "ada@example.org" } : { name: "ada lovelace", phone: "+44 20 7946 0958" }, { token: t }));
  expect(statuses(rs)).toEqual(Array(N).fill(200));
  expect(rs.filter((r) => r.body.result.updated_existing === false)).toHaveLength(1);
  expect(new Set(rs.map((r) => r.body.result.id)).size).toBe(1);
  const list = (await h.call("contacts/list", {}, { token: t })).body.result;
  expect(list).toHaveLength(1);
  expect(list[0]).toMatchObject({ email: "ada@example.org", phone: "+44 20 7946 0958" });
});

test("tasks/update of different fields at once loses none of them; tasks/delete at once deletes once", async () => {
  const t = await h.token("tasks-race");
  const id = (await h.call("tasks/create", { title: "before" }, { token: t })).body.result.id;
  const changes = [{ title: "after" }, { detail: "the detail" }, { status: "doing" }, { result: "the result" }];
  const rs = await times(N, (i) => h.call("tasks/update", { id, ...changes[i % changes.length] }, { token: t }));
  expect(statuses(rs)).toEqual(Array(N).fill(200));
  const [task] = (await h.call("tasks/list", {}, { token: t })).body.result;
  expect(task).toMatchObject({ title: "after", detail: "the detail", status: "doing", result: "the result" });
  const gone = await times(N, () => h.call("tasks/delete", { id }, { token: t }));
  expect(count(gone, 200)).toBe(1);
  expect(count(gone, 404)).toBe(N - 1);
});

test("blog/update of different fields at once loses none of them; blog/delete at once deletes once", async () => {
  const t = await h.token("blog-race");
  const body = "A post long enough to be one: it needs fifty characters at the least.";
  const id = (await h.call("blog/create", { title: "Before", content: body }, { token: t })).body.result.id;
  const changes = [{ title: "After" }, { content: `${body} Changed.` }, { tags: "garden" }];
  const rs = await times(N, (i) => h.call("blog/update", { id, ...changes[i % changes.length] }, { token: t }));
  expect(statuses(rs)).toEqual(Array(N).fill(200));
  expect((await h.call("blog/read", { id }, { token: t })).body.result).toMatchObject({ title: "After", content: `${body} Changed.`, tags: "garden" });
  const gone = await times(N, () => h.call("blog/delete", { id }, { token: t }));
  expect(count(gone, 200)).toBe(1);
  expect(count(gone, 404)).toBe(N - 1);
});

test("docs/write and docs/delete of one document at once: it goes once, and no call fails on the way", async () => {
  const t = await h.token("docs-race");
  const id = (await h.call("docs/write", { title: "Plan", content: "first" }, { token: t })).body.result.id;
  const rs = await times(N, (i) => (i % 2 ? h.call("docs/delete", { id }, { token: t }) : h.call("docs/write", { id, title: "Plan", content: `edit ${i}`, public: true }, { token: t })));
  expect(rs.filter((r) => r.status >= 500)).toEqual([]);
  expect(count(rs.filter((_, i) => i % 2), 200)).toBe(1);
  expect(rs.every((r) => r.status === 200 || r.status === 404)).toBe(true);
  expect((await h.call("docs/read", { id }, { token: t })).status).toBe(404);
});

test("files/delete of one file at once deletes it once", async () => {
  const t = await h.token("files-race");
  const id = (await h.call("files/put", { name: "a.txt", content: "a" }, { token: t })).body.result.id;
  const gone = await times(N, () => h.call("files/delete", { id }, { token: t }));
  expect(count(gone, 200)).toBe(1);
  expect(count(gone, 404)).toBe(N - 1);
});

test("WebDAV PUT and MKCOL of one path at once: one file or folder there, made once", async () => {
  const t = await h.token("files-dav", { scopes: ["files"] });
  const dav = (method: string, path: string, body?: string) =>
    fetch(`${h.url}/files/dav${path}`, { method, body, headers: { authorization: `Basic ${btoa(`files-dav:${t}`)}` } });
  const puts = await times(N, (i) => dav("PUT", "/same.txt", `version ${i}`));
  if (count(puts, 204) !== N - 1) console.log("PUTS", await Promise.all(puts.map(async (p) => `${p.status} ${p.status >= 300 ? await p.clone().text() : ""}`)));
  expect(count(puts, 201)).toBe(1);
  expect(count(puts, 204)).toBe(N - 1);
  expect((await h.call("files/list", {}, { token: t })).body.result.filter((f: { name: string }) => f.name === "same.txt")).toHaveLength(1);
  const dirs = await times(N, () => dav("MKCOL", "/Photos"));
  expect(count(dirs, 201)).toBe(1);
  expect(count(dirs, 405)).toBe(N - 1);
});

test("the calendar feed asked for at once is made once: every caller gets the same address", async () => {
  const t = await h.token("events-feed");
  const rs = await times(N, () => post("/events/feed", t));
  expect(statuses(rs)).toEqual(Array(N).fill(200));
  expect(new Set(rs.map((r) => r.body.result.url)).size).toBe(1);
});

test("notes/add of one title at once: one note, holding one of the texts", async () => {
  const t = await h.token("notes-race");
  const rs = await times(N, (i) => h.call("notes/add", { title: "same", text: `text ${i}` }, { token: t }));
  expect(statuses(rs)).toEqual(Array(N).fill(200));
  const list = (await h.call("notes/list", {}, { token: t })).body.result;
  expect(list).toHaveLength(1);
  expect(rs.map((r) => r.body.result.text)).toContain(list[0].text);
});

test("CardDAV cards of one name put at once: one is kept, the others refused with the same 409", async () => {
  const t = await h.token("cards-race", { scopes: ["contacts"] });
  const card = (i: number) => `BEGIN:VCARD\r\nVERSION:3.0\r\nUID:card-${i}\r\nFN:Grace Hopper\r\nEMAIL:grace${i}@example.org\r\nEND:VCARD\r\n`;
  const rs = await times(N, (i) =>
    fetch(`${h.url}/dav/addressbooks/cards-race/contacts/card-${i}.vcf`, {
      method: "PUT",
      body: card(i),
      headers: { authorization: `Basic ${btoa(`cards-race:${t}`)}`, "content-type": "text/vcard" },
    }),
  );
  expect(count(rs, 201)).toBe(1);
  expect(count(rs, 409)).toBe(N - 1);
  expect((await h.call("contacts/list", {}, { token: t })).body.result).toHaveLength(1);
});
