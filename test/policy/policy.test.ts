// Policies per credential, through the real stack: a token's policy is set on
// /token, and every call with it obeys it in dispatch. "deny" refuses at once;
// "ask" holds the call until the owner answers on /approvals (with the
// session and its CSRF token); approved, it runs and is charged; declined or
// unanswered, it is refused with 403 and nothing is done or charged. The
// activity log says who approved.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mailOf } from "../../core/mail/index.ts";
import { signUp, type Signed } from "../auth/people.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { startSink } from "../mail/sink.ts";

let h: Hearth;
let quick: Hearth;
const clock = new TestClock();
let relay: Awaited<ReturnType<typeof startSink>>;
let alice: Signed;

const mailEnv = (port: number) => ({
  HEARTH_SIGNUP: "open",
  HEARTH_METER_ACCOUNTS: "all",
  MAIL_DOMAIN: "example.test",
  SMTP_PORT: "off",
  SMTP_RELAY_URL: `smtp://127.0.0.1:${port}`,
});

beforeAll(async () => {
  relay = await startSink();
  h = await startHearth({ env: { ...mailEnv(relay.port), HEARTH_APPROVAL_SECONDS: "120" } });
  // An instance whose owner never answers in time: its clock, not real time, says when a request has waited too long.
  quick = await startHearth({ env: { ...mailEnv(relay.port), HEARTH_APPROVAL_SECONDS: "300" }, clock });
  alice = await signUp(h, "alice");
  await h.grant("alice", 100);
});
afterAll(async () => {
  await h.stop();
  await quick.stop();
  await relay.stop();
});

async function post(hh: Hearth, path: string, body: unknown, s: Signed | null = alice, csrf = true) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (s) headers.cookie = s.cookie;
  if (s && csrf) headers["x-csrf-token"] = s.csrf;
  const res = await fetch(hh.url + path, { method: "POST", headers, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

async function token(hh: Hearth, s: Signed, name: string, policy?: unknown, scopes: unknown = "*") {
  const r = await post(hh, "/token", { name, scopes, ...(policy ? { policy } : {}) }, s);
  expect(r.status).toBe(200);
  return r.body.result as { token: string; id: string };
}

/** What waits for the owner, as /approvals says over JSON. */
async function waiting(hh: Hearth, s: Signed = alice): Promise<any[]> {
  const res = await fetch(`${hh.url}/approvals`, { headers: { cookie: s.cookie } });
  return (await res.json()).result.waiting;
}

/** Waits until a request for `method` waits for the owner, and gives it. */
async function asked(hh: Hearth, method: string, s: Signed = alice): Promise<any> {
  for (;;) {
    const found = (await waiting(hh, s)).find((a) => `${a.service}/${a.method}` === method);
    if (found) return found;
    await Bun.sleep(20);
  }
}

const charged = async (hh: Hearth, username: string) =>
  (
    await hh.rows<{ method: string; delta: number }>(
      "SELECT l.method, l.delta FROM pay_ledger l JOIN accounts a ON a.id = l.account WHERE l.reason = 'charge' AND a.username = ? ORDER BY l.id",
      username,
    )
  ).map((r) => [r.method, Number(r.delta)]);

describe("a token's policy", () => {
  test("is set when the token is made, shown on /token and read back", async () => {
    const t = await token(h, alice, "careful", { classes: { destructive: "deny" }, methods: { "tasks/create": "ask" } });
    const got = await fetch(`${h.url}/token/policy?id=${t.id}`, { headers: { cookie: alice.cookie } });
    const p = (await got.json()).result.policy;
    expect(p.classes).toEqual({ read: "allow", write: "allow", destructive: "deny", outbound: "allow", costs: "allow" });
    expect(p.methods).toEqual({ "tasks/create": "ask" });
    const page = await (await fetch(`${h.url}/token`, { headers: { cookie: alice.cookie, accept: "text/html" } })).text();
    expect(page).toContain("refuses removing; 1 method rule");
  });

  test("deny refuses at once with 403, and nothing is done", async () => {
    const t = await token(h, alice, "no-removing", { classes: { destructive: "deny" } });
    const r = await h.call("notes/delete", { title: "anything" }, { token: t.token });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ kind: "forbidden", policy: "deny" });
    expect(r.body.error.message).toContain("methods that remove or overwrite");
    // Reads still run.
    expect((await h.call("notes/list", {}, { token: t.token })).status).toBe(200);
  });

  test("a method's own rule overrides its class", async () => {
    const t = await token(h, alice, "lists-only", { classes: { read: "deny" }, methods: { "notes/list": "allow" } });
    expect((await h.call("notes/list", {}, { token: t.token })).status).toBe(200);
    expect((await h.call("tasks/list", {}, { token: t.token })).status).toBe(403);
  });

  test("an impossible policy is refused by field, and no token is made", async () => {
    const before = (await (await fetch(`${h.url}/token`, { headers: { cookie: alice.cookie } })).json()).result.length;
    for (const [policy, field] of [
      [{ classes: { outbound: "maybe" } }, "policy.classes.outbound"],
      [{ classes: { sending: "ask" } }, "policy.classes.sending"],
      [{ methods: { "notes/nothing": "deny" } }, "policy.methods"],
      [{ costsAbove: -1 }, "policy.costsAbove"],
      [{ untrusted: "sometimes" }, "policy.untrusted"],
    ] as const) {
      const r = await post(h, "/token", { name: "bad", policy }, alice);
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe(field);
    }
    const after = (await (await fetch(`${h.url}/token`, { headers: { cookie: alice.cookie } })).json()).result.length;
    expect(after).toBe(before);
  });

  test("only its owner's session, with CSRF, changes it; a change holds at once", async () => {
    const t = await token(h, alice, "changing");
    expect((await h.call("notes/list", {}, { token: t.token })).status).toBe(200);
    const bob = await signUp(h, "bob");
    expect((await post(h, "/token/policy", { id: t.id, policy: { classes: { read: "deny" } } }, bob)).status).toBe(404);
    expect((await post(h, "/token/policy", { id: t.id, policy: { classes: { read: "deny" } } }, alice, false)).status).toBe(403);
    // A token cannot set its own policy: the route is the session's.
    const self = await fetch(`${h.url}/token/policy`, { method: "POST", headers: { authorization: `Bearer ${t.token}`, "content-type": "application/json" }, body: JSON.stringify({ id: t.id, policy: {} }) });
    expect(self.status).toBe(401);
    const r = await post(h, "/token/policy", { id: t.id, policy: { classes: { read: "deny" } } }, alice);
    expect(r.status).toBe(200);
    expect((await h.call("notes/list", {}, { token: t.token })).status).toBe(403);
  });
});

describe("ask: the call waits for the owner", () => {
  test("approved on /approvals, the mail goes and is charged once; the log names who approved", async () => {
    const t = await token(h, alice, "mailer", { classes: { outbound: "ask" } });
    const before = await charged(h, "alice");
    const call = h.call("mail/send", { to: "carol@example.com", subject: "Lunch", body: "Noon at the usual place?" }, { token: t.token, method: "POST" });
    const a = await asked(h, "mail/send");
    expect(a.client).toBe("mailer");
    expect(JSON.parse(a.args)).toEqual({ to: "carol@example.com", subject: "Lunch", body: "Noon at the usual place?" });
    expect(a.price).toBe(4);
    expect(a.reason).toContain("methods that send outside this instance");
    // Nothing has gone, nor been charged, while it waits.
    expect(await charged(h, "alice")).toEqual(before);
    // A decision without the CSRF token, or by someone else, is refused; the request still waits.
    expect((await post(h, "/approvals/decide", { id: a.id, decision: "approve" }, alice, false)).status).toBe(403);
    const bob = await signUp(h, "bob2");
    expect((await post(h, "/approvals/decide", { id: a.id, decision: "approve" }, bob)).status).toBe(404);
    const yes = await post(h, "/approvals/decide", { id: a.id, decision: "approve" }, alice);
    expect(yes.status).toBe(200);
    const r = await call;
    expect(r.status).toBe(200);
    const got = await relay.next();
    expect(got.to).toEqual(["carol@example.com"]);
    // Charged what ran: the one mail.
    expect((await charged(h, "alice")).slice(before.length)).toEqual([["mail/send", -4]]);
    // Answered once: a second answer is a conflict.
    expect((await post(h, "/approvals/decide", { id: a.id, decision: "decline" }, alice)).status).toBe(409);
    await h.rt.audit!.flush();
    const entry = await h.row("SELECT outcome, approved, credits FROM audit_entries WHERE method = 'send' AND credential = ? ORDER BY id DESC", t.id);
    expect(entry).toMatchObject({ outcome: "ok", approved: "person:alice" });
    expect(Number(entry!.credits)).toBe(4);
  });

  test("declined, it is refused with 403: no mail, no charge", async () => {
    const t = await token(h, alice, "mailer2", { classes: { outbound: "ask" } });
    const before = await charged(h, "alice");
    const sent = relay.received.length;
    const call = h.call("mail/send", { to: "dave@example.com", subject: "Hi", body: "Hello" }, { token: t.token, method: "POST" });
    const a = await asked(h, "mail/send");
    expect((await post(h, "/approvals/decide", { id: a.id, decision: "decline" }, alice)).status).toBe(200);
    const r = await call;
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ kind: "forbidden", approval: "declined", approval_id: a.id });
    await mailOf(h.rt).settled();
    expect(relay.received.length).toBe(sent);
    expect(await h.rows("SELECT id FROM mail_outbox WHERE recipient = 'dave@example.com'")).toEqual([]);
    expect(await charged(h, "alice")).toEqual(before);
    const list = await (await fetch(`${h.url}/approvals`, { headers: { cookie: alice.cookie } })).json();
    expect(list.result.waiting).toEqual([]);
    expect(list.result.settled[0]).toMatchObject({ id: a.id, decision: "declined", decidedBy: "alice" });
  });

  test("unanswered, it is refused when its time runs out: nothing sent or charged", async () => {
    const s = await signUp(quick, "erin");
    await quick.grant("erin", 50);
    const t = await token(quick, s, "slow", { classes: { outbound: "ask" } });
    const call = quick.call("mail/send", { to: "frank@example.com", subject: "Hi", body: "Hello" }, { token: t.token, method: "POST" });
    const a = await asked(quick, "mail/send", s);
    // A second short of its time it still waits.
    clock.advance(299_000);
    await quick.rt.approvals!.due();
    expect((await waiting(quick, s)).map((w) => w.id)).toEqual([a.id]);
    clock.advance(2_000);
    await quick.rt.approvals!.due();
    const r = await call;
    expect(r.status).toBe(403);
    expect(r.body.error.approval_id).toBe(a.id);
    expect(r.body.error.message).toContain("waited 300 s");
    expect(r.body.error.approval).toBe("timed_out");
    expect(r.body.error.message).toContain("got no answer");
    expect(await charged(quick, "erin")).toEqual([]);
    const row = await quick.row("SELECT decision FROM approvals WHERE id = ?", r.body.error.approval_id);
    expect(row!.decision).toBe("expired");
    // Too late to approve.
    expect((await post(quick, "/approvals/decide", { id: r.body.error.approval_id, decision: "approve" }, s)).status).toBe(409);
  });

  test("spending above the credential's amount asks; at or below it runs", async () => {
    const t = await token(h, alice, "thrifty", { classes: { costs: "ask" }, costsAbove: 4 });
    const before = await charged(h, "alice");
    const r = await h.call("mail/send", { to: "gina@example.com", subject: "Hi", body: "Hello" }, { token: t.token, method: "POST" });
    expect(r.status).toBe(200);
    expect((await charged(h, "alice")).slice(before.length)).toEqual([["mail/send", -4]]);
    await post(h, "/token/policy", { id: t.id, policy: { costsAbove: 3 } }, alice);
    const call = h.call("mail/send", { to: "gina@example.com", subject: "Again", body: "Hello" }, { token: t.token, method: "POST" });
    const a = await asked(h, "mail/send");
    expect(a.reason).toContain("calls costing more than 3 credit(s)");
    await post(h, "/approvals/decide", { id: a.id, decision: "decline" }, alice);
    expect((await call).status).toBe(403);
    expect((await charged(h, "alice")).slice(before.length)).toEqual([["mail/send", -4]]);
  });
});
