import { afterAll, beforeAll, expect, test } from "bun:test";
import { startHearth, type Hearth } from "../harness.ts";

let h: Hearth;
let alice: string;
let bob: string;
beforeAll(async () => {
  h = await startHearth();
  alice = await h.token("alice");
  bob = await h.token("bob");
});
afterAll(() => h.stop());

test("add saves; the same name in another case updates rather than duplicates", async () => {
  const a = await h.call("contacts/add", { name: "Ada Lovelace", email: "ada@example.org", phone: "+44 20 7946 0958" }, { token: alice });
  expect(a.status).toBe(200);
  expect(a.body.result).toMatchObject({ name: "Ada Lovelace", email: "ada@example.org", updated_existing: false });
  const b = await h.call("contacts/add", { name: "ada lovelace", note: "mathematician" }, { token: alice });
  expect(b.body.result).toMatchObject({ id: a.body.result.id, email: "ada@example.org", note: "mathematician", updated_existing: true });
  const list = (await h.call("contacts/list", {}, { token: alice })).body.result;
  expect(list.length).toBe(1);
});

test("find matches part of a name, an email or a phone", async () => {
  await h.call("contacts/add", { name: "Charles Babbage", email: "charles@engine.example" }, { token: alice });
  const names = async (query: string) => (await h.call("contacts/find", { query }, { token: alice })).body.result.map((c: { name: string }) => c.name);
  expect(await names("love")).toEqual(["ada lovelace"]);
  expect(await names("CHAR")).toEqual(["Charles Babbage"]);
  expect(await names("engine.example")).toEqual(["Charles Babbage"]);
  expect(await names("7946")).toEqual(["ada lovelace"]);
  expect(await names("2079460958")).toEqual(["ada lovelace"]);
  expect(await names("a")).toEqual(["ada lovelace", "Charles Babbage"]);
  expect(await names("%")).toEqual([]);
  expect(await names("zzz")).toEqual([]);
});

test("rules: name required, email and phone checked", async () => {
  expect((await h.call("contacts/add", { email: "x@y.z" }, { token: alice })).body.error.field).toBe("name");
  expect((await h.call("contacts/add", { name: "X", email: "not-an-address" }, { token: alice })).body.error.field).toBe("email");
  expect((await h.call("contacts/add", { name: "X", phone: "call me" }, { token: alice })).body.error.field).toBe("phone");
  expect((await h.call("contacts/find", {}, { token: alice })).body.error.field).toBe("query");
});

test("address books are separate; delete removes and another's id is 404", async () => {
  expect((await h.call("contacts/list", {}, { token: bob })).body.result).toEqual([]);
  expect((await h.call("contacts/find", { query: "ada" }, { token: bob })).body.result).toEqual([]);
  await h.call("contacts/add", { name: "Ada Lovelace" }, { token: bob });
  const mine = (await h.call("contacts/find", { query: "ada" }, { token: alice })).body.result[0];
  expect((await h.call("contacts/delete", { id: mine.id }, { token: bob })).status).toBe(404);
  expect((await h.call("contacts/delete", { id: mine.id }, { token: alice })).status).toBe(200);
  expect((await h.call("contacts/find", { query: "ada" }, { token: alice })).body.result).toEqual([]);
  expect((await h.call("contacts/list", {}, { token: bob })).body.result.length).toBe(1);
});

test("add takes every email and phone as lists with their kinds; a bad entry is 400 naming the list, and nothing is written", async () => {
  const made = await h.call(
    "contacts/add",
    { name: "Mary Somerville", emails: [{ value: "mary@home.example", type: "home" }, { value: "mary@work.example", type: "Work" }], phones: [{ value: "+44 131 496 0000" }] },
    { token: alice },
  );
  expect(made.status).toBe(200);
  expect(made.body.result).toMatchObject({ email: "mary@home.example", emails: ["mary@home.example", "mary@work.example"], email_types: ["home", "work"], phone: "+44 131 496 0000" });
  expect(made.body.result.phones).toBeUndefined();
  // Found by the second address, as a synced card's would be.
  expect((await h.call("contacts/find", { query: "mary@work" }, { token: alice })).body.result.map((c: { id: string }) => c.id)).toEqual([made.body.result.id]);

  for (const [args, field] of [
    [{ emails: [{ value: "mary@home.example" }, { value: "not an address" }] }, "emails"],
    [{ phones: [{ value: "call me" }] }, "phones"],
    [{ emails: [{ value: "a@b.example", type: "home office!" }] }, "emails"],
    [{ email: "mary@x.example", emails: [] }, "emails"],
    [{ emails: Array.from({ length: 21 }, (_v, i) => ({ value: `m${i}@x.example` })) }, "emails"],
  ] as const) {
    const r = await h.call("contacts/add", { name: "Mary Somerville", note: "changed?", ...args }, { token: alice });
    expect(r.status).toBe(400);
    expect(String(r.body.error.field)).toStartWith(field);
  }
  const [kept] = (await h.call("contacts/find", { query: "Somerville" }, { token: alice })).body.result;
  expect(kept).toMatchObject({ note: null, emails: ["mary@home.example", "mary@work.example"] });

  // [] removes them all; email alone then works as it always has.
  const cleared = await h.call("contacts/add", { name: "Mary Somerville", emails: [] }, { token: alice });
  expect(cleared.body.result).toMatchObject({ email: null });
  expect(cleared.body.result.emails).toBeUndefined();
  const one = await h.call("contacts/add", { name: "Mary Somerville", email: "mary@new.example" }, { token: alice });
  expect(one.body.result).toMatchObject({ email: "mary@new.example" });
  expect(one.body.result.emails).toBeUndefined();
});
