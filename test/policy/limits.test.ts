// Spending limits per credential: credits a day, and where its sends may go.
// Twenty calls at once against a 10-credit day pass only as far as the limit
// allows (mail out costs 4: two go, eighteen are refused), and what was
// charged is exactly what ran. A send to a recipient outside the allowlist
// is refused before anything is done; with "ask" past a limit, the owner is
// asked instead.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mailOf } from "../../core/mail/index.ts";
import { signUp, type Signed } from "../auth/people.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { startSink } from "../mail/sink.ts";

let h: Hearth;
let relay: Awaited<ReturnType<typeof startSink>>;
let s: Signed;

beforeAll(async () => {
  relay = await startSink();
  h = await startHearth({
    env: {
      HEARTH_SIGNUP: "open",
      HEARTH_METER_ACCOUNTS: "all",
      MAIL_DOMAIN: "example.test",
      SMTP_PORT: "off",
      SMTP_RELAY_URL: `smtp://127.0.0.1:${relay.port}`,
      HEARTH_APPROVAL_SECONDS: "120",
      HEARTH_RATE_WRITES: "0",
      HEARTH_RATE_PRICED: "0",
    },
  });
  s = await signUp(h, "alice");
  await h.grant("alice", 500);
});
afterAll(async () => {
  await h.stop();
  await relay.stop();
});

async function post(path: string, body: unknown) {
  const res = await fetch(h.url + path, { method: "POST", headers: { "content-type": "application/json", cookie: s.cookie, "x-csrf-token": s.csrf }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

const charges = async () =>
  (await h.rows<{ method: string; delta: number }>("SELECT method, delta FROM pay_ledger WHERE reason = 'charge' ORDER BY id")).map((r) => [r.method, Number(r.delta)]);

test("a 10-credit day holds under 20 calls at once: two mails of 4 go, the rest are refused, and charged is what ran", async () => {
  const t = (await post("/token", { name: "bulk", policy: { creditsPerDay: 10 } })).body.result;
  const before = await charges();
  const sent = relay.received.length;
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) => h.call("mail/send", { to: `friend${i}@example.com`, subject: `Note ${i}`, body: "Hello." }, { token: t.token, method: "POST" })),
  );
  const ok = answers.filter((r) => r.status === 200);
  const refused = answers.filter((r) => r.status === 403);
  expect(ok.length).toBe(2);
  expect(refused.length).toBe(18);
  for (const r of refused) {
    expect(r.body.error).toMatchObject({ kind: "forbidden", policy: "limit" });
    expect(r.body.error.message).toContain("past its 10 credits for today");
  }
  await mailOf(h.rt).settled();
  while (relay.received.length < sent + 2) await Bun.sleep(10);
  // What ran is what was charged: two mails, 4 credits each, and the day's count says 8.
  expect((await charges()).slice(before.length)).toEqual([
    ["mail/send", -4],
    ["mail/send", -4],
  ]);
  expect((await h.rows("SELECT recipient FROM mail_outbox WHERE recipient LIKE 'friend%'")).length).toBeLessThanOrEqual(2);
  expect(relay.received.length - sent).toBe(2);
  const day = await h.row("SELECT spent FROM credential_spend WHERE credential = ?", t.id);
  expect(Number(day!.spent)).toBe(8);
  // A free call still runs past the limit.
  expect((await h.call("mail/send", { to: "alice", subject: "to myself", body: "free" }, { token: t.token, method: "POST" })).status).toBe(200);
});

test("a call that does not run gives its credits back to the day", async () => {
  const t = (await post("/token", { name: "careful", policy: { creditsPerDay: 4, classes: { costs: "ask" } } })).body.result;
  const answer = async (decision: "approve" | "decline") => {
    let waiting: any[] = [];
    while (!waiting.length) {
      waiting = ((await (await fetch(`${h.url}/approvals`, { headers: { cookie: s.cookie } })).json()) as any).result.waiting;
      if (!waiting.length) await Bun.sleep(20);
    }
    await post("/approvals/decide", { id: waiting[0].id, decision });
  };
  // Taken from the day while it waits, given back when declined.
  const declined = h.call("mail/send", { to: "hal@example.com", subject: "x", body: "y" }, { token: t.token, method: "POST" });
  await answer("decline");
  expect((await declined).status).toBe(403);
  expect(Number((await h.row("SELECT spent FROM credential_spend WHERE credential = ?", t.id))!.spent)).toBe(0);
  const approved = h.call("mail/send", { to: "hal@example.com", subject: "x", body: "y" }, { token: t.token, method: "POST" });
  await answer("approve");
  expect((await approved).status).toBe(200);
  expect(Number((await h.row("SELECT spent FROM credential_spend WHERE credential = ?", t.id))!.spent)).toBe(4);
});

test("a send to a recipient outside the allowlist is refused, nothing sent or charged; one inside goes", async () => {
  const t = (await post("/token", { name: "family", policy: { recipients: ["Mum@example.com", "+447700900123"] } })).body.result;
  const before = await charges();
  const sent = relay.received.length;
  const out = await h.call("mail/send", { to: "stranger@example.com", subject: "x", body: "y" }, { token: t.token, method: "POST" });
  expect(out.status).toBe(403);
  expect(out.body.error).toMatchObject({ policy: "limit" });
  expect(out.body.error.message).toContain("stranger@example.com is not one");
  const sms = await h.call("sms/send", { to: "+447700900666", text: "hi" }, { token: t.token, method: "POST" });
  expect(sms.status).toBe(403);
  expect(await charges()).toEqual(before);
  const inside = await h.call("mail/send", { to: "mum@example.com", subject: "Sunday", body: "Lunch at one." }, { token: t.token, method: "POST" });
  expect(inside.status).toBe(200);
  while (!relay.received.slice(sent).some((m) => m.to.includes("mum@example.com"))) await Bun.sleep(10);
  expect(relay.received.some((m) => m.to.includes("stranger@example.com"))).toBe(false);
  expect((await charges()).slice(before.length)).toEqual([["mail/send", -4]]);
});

test("a payment through the wallet to a server outside the allowlist is refused", async () => {
  const t = (await post("/token", { name: "payer", policy: { recipients: ["this"] } })).body.result;
  const r = await h.call("wallet/pay", { server: "elsewhere", tool: "weather_forecast" }, { token: t.token, method: "POST" });
  expect(r.status).toBe(403);
  expect(r.body.error.message).toContain("elsewhere is not one");
});

test("with 'ask' past a limit, the owner is asked, and the call runs once approved", async () => {
  const t = (await post("/token", { name: "asker", policy: { recipients: ["mum@example.com"], overLimit: "ask" } })).body.result;
  const call = h.call("mail/send", { to: "uncle@example.com", subject: "x", body: "y" }, { token: t.token, method: "POST" });
  let waiting: any[] = [];
  while (!waiting.length) {
    waiting = ((await (await fetch(`${h.url}/approvals`, { headers: { cookie: s.cookie } })).json()) as any).result.waiting;
    if (!waiting.length) await Bun.sleep(20);
  }
  expect(waiting[0].reason).toContain("uncle@example.com is not one");
  expect((await post("/approvals/decide", { id: waiting[0].id, decision: "approve" })).status).toBe(200);
  expect((await call).status).toBe(200);
});
