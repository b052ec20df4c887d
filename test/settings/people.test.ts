// /people over HTTP: the admin lists accounts, invites (the invited person
// signs up), disables (sign-in, sessions and tokens stop at once) and
// enables, makes a password link, grants credits, chooses metering and
// deletes an account with what it kept; an admin cannot shut themselves out.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startHearth, type Hearth } from "../harness.ts";
import { form, get, post, signIn, signUp, type Signed } from "../auth/people.ts";

let h: Hearth;
let admin: Signed;

beforeAll(async () => {
  // Every request here comes from 127.0.0.1: the per-address sign-in limit is not what these tests are about.
  h = await startHearth({ env: { HEARTH_METER_ACCOUNTS: "on", HEARTH_RATE_SIGNIN: "0" } });
  admin = await signUp(h, "alice");
});
afterAll(() => h?.stop());

const act = (fields: Record<string, unknown>, who = admin) => post(h, "/people", fields, { cookie: who.cookie, "x-csrf-token": who.csrf });

test("invite: the invited person signs up with the link; the list shows both", async () => {
  const inv = await act({ action: "invite" });
  expect(inv.status).toBe(200);
  expect(inv.body.result.url).toContain("/signup?invite=");
  const bob = await signUp(h, "bob", "a long passphrase", { invite: inv.body.result.code });
  expect(bob.cookie).toBeTruthy();
  const list = await get(h, "/people", { cookie: admin.cookie });
  expect(list.body.result.map((p: any) => [p.username, p.admin, p.disabled])).toEqual([
    ["alice", true, false],
    ["bob", false, false],
  ]);
  // Not an admin: refused.
  expect((await get(h, "/people", { cookie: bob.cookie })).status).toBe(403);
  expect((await act({ action: "invite" }, bob)).status).toBe(403);
});

test("disable ends sessions and tokens and refuses sign-in; enable lets the password in again", async () => {
  const bob = await signIn(h, "bob");
  const token = await h.token("bob");
  expect((await h.call("notes/add", { title: "mine", text: "kept" }, { token })).status).toBe(200);
  expect((await act({ action: "disable", user: "bob" })).status).toBe(200);
  expect((await get(h, "/session", { cookie: bob.cookie })).status).toBe(401);
  expect((await h.call("notes/list", {}, { token })).status).toBe(401);
  const refused = await post(h, "/signin", { username: "bob", password: "a long passphrase" });
  expect(refused.status).toBe(403);
  expect(refused.body.error.message).toContain("disabled");
  // A wrong password still says only that the pair is wrong.
  expect((await post(h, "/signin", { username: "bob", password: "not the passphrase" })).status).toBe(401);
  expect((await act({ action: "enable", user: "bob" })).status).toBe(200);
  expect((await signIn(h, "bob")).cookie).toBeTruthy();
});

test("an admin cannot disable or delete themselves", async () => {
  for (const action of ["disable", "delete"]) {
    const r = await act({ action, user: "alice", confirm: "alice" });
    expect(r.status).toBe(403);
  }
  expect((await signIn(h, "alice")).cookie).toBeTruthy();
});

test("a password link works once and lets the person in", async () => {
  const r = await act({ action: "reset", user: "bob" });
  expect(r.status).toBe(200);
  const code = new URL(r.body.result.url).searchParams.get("code")!;
  const set = await form(h, "/password", [["code", code], ["password", "a new long passphrase"]]);
  expect(set.status).toBe(303);
  expect((await signIn(h, "bob", "a new long passphrase")).cookie).toBeTruthy();
  expect((await form(h, "/password", [["code", code], ["password", "another passphrase"]])).status).toBe(400);
});

test("credits and metering: grant shows in the balance; a bad amount names the field", async () => {
  const g = await act({ action: "grant", user: "bob", amount: "25" });
  expect(g.status).toBe(200);
  const bad = await act({ action: "grant", user: "bob", amount: "lots" });
  expect(bad.status).toBe(400);
  expect(bad.body.error.field).toBe("amount");
  const m = await act({ action: "meter", user: "bob", metered: "off" });
  expect(m.body.result).toMatchObject({ user: "bob", metered: false, chosen: true });
  const token = await h.token("bob");
  expect((await h.call("credits/balance", {}, { token })).body.result.balance).toBe(25);
});

test("delete needs the username typed, then removes the account and what it kept", async () => {
  const token = await h.token("bob");
  expect((await h.call("notes/add", { title: "to go", text: "soon" }, { token })).status).toBe(200);
  const unconfirmed = await act({ action: "delete", user: "bob", confirm: "bobby" });
  expect(unconfirmed.status).toBe(400);
  expect(unconfirmed.body.error.field).toBe("confirm");
  const id = (await h.row("SELECT id FROM accounts WHERE username = ?", "bob"))!.id;
  expect((await act({ action: "delete", user: "bob", confirm: "bob" })).status).toBe(200);
  expect(await h.row("SELECT id FROM accounts WHERE username = ?", "bob")).toBeUndefined();
  expect(await h.rows("SELECT title FROM notes WHERE owner = ?", id)).toEqual([]);
  expect((await h.call("notes/list", {}, { token })).status).toBe(401);
  expect((await post(h, "/signin", { username: "bob", password: "a new long passphrase" })).status).toBe(401);
});
