// An MCP client that declared elicitation is asked through it when its
// credential's policy says "ask": the SDK's own client (2025-11-25 session)
// receives a form, and its person's answer decides. Accepted, the mail goes
// over loopback SMTP and is charged; declined, no mail, no charge, and the
// tool answers 403. A client that did not declare it waits for the owner on
// /approvals as any other.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { signUp, type Signed } from "../auth/people.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { mcpClient } from "../mcp/client.ts";
import { startSink } from "../mail/sink.ts";

let h: Hearth;
let relay: Awaited<ReturnType<typeof startSink>>;
let s: Signed;
let token: string;

beforeAll(async () => {
  relay = await startSink();
  h = await startHearth({
    env: { HEARTH_SIGNUP: "open", HEARTH_METER_ACCOUNTS: "all", MAIL_DOMAIN: "example.test", SMTP_PORT: "off", SMTP_RELAY_URL: `smtp://127.0.0.1:${relay.port}`, HEARTH_APPROVAL_SECONDS: "120" },
  });
  s = await signUp(h, "alice");
  await h.grant("alice", 100);
  const res = await fetch(`${h.url}/token`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie: s.cookie, "x-csrf-token": s.csrf },
    body: JSON.stringify({ name: "Desk assistant", policy: { classes: { outbound: "ask" } } }),
  });
  token = ((await res.json()) as any).result.token;
});
afterAll(async () => {
  await h.stop();
  await relay.stop();
});

const charged = async () =>
  (await h.rows<{ method: string; delta: number }>("SELECT l.method, l.delta FROM pay_ledger l WHERE l.reason = 'charge' ORDER BY l.id")).map((r) => [r.method, Number(r.delta)]);

/** A client declaring form elicitation whose person answers `answer`; what it was asked is kept. */
async function asking(answer: "accept" | "decline") {
  const c = await mcpClient(h.url, { token, capabilities: { elicitation: { form: {} } } });
  const asked: any[] = [];
  c.client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params);
    return answer === "accept" ? { action: "accept", content: { approve: true } } : { action: "decline" };
  });
  return { ...c, asked };
}

test("2025-11-25: accepted through elicitation, the mail goes and is charged once", async () => {
  const c = await asking("accept");
  const before = await charged();
  const r = await c.call("mail_send", { to: "carol@example.com", subject: "Minutes", body: "Tuesday's minutes." });
  expect(r.isError).toBeFalsy();
  expect(c.asked.length).toBe(1);
  expect(c.asked[0].mode ?? "form").toBe("form");
  expect(c.asked[0].message).toContain("Allow Desk assistant to call mail/send?");
  expect(c.asked[0].message).toContain("to: carol@example.com");
  expect(c.asked[0].message).toContain("Price: 4 credits");
  expect(c.asked[0].requestedSchema.properties.approve.type).toBe("boolean");
  expect((await relay.next()).to).toEqual(["carol@example.com"]);
  expect((await charged()).slice(before.length)).toEqual([["mail/send", -4]]);
  const row = await h.row("SELECT decision, decided_by FROM approvals ORDER BY created DESC LIMIT 1");
  expect(row).toMatchObject({ decision: "approved", decided_by: "alice, at Desk assistant" });
  await c.close();
});

test("2025-11-25: declined through elicitation, no mail, no charge, and 403", async () => {
  const c = await asking("decline");
  const before = await charged();
  const sent = relay.received.length;
  const r = await c.call("mail_send", { to: "dave@example.com", subject: "Offer", body: "Not this one." });
  expect(r.isError).toBe(true);
  expect((r.structuredContent as any).error).toMatchObject({ status: 403, kind: "forbidden", approval: "declined" });
  expect(c.asked.length).toBe(1);
  expect(await h.rows("SELECT id FROM mail_outbox WHERE recipient = 'dave@example.com'")).toEqual([]);
  expect(relay.received.length).toBe(sent);
  expect(await charged()).toEqual(before);
  await c.close();
});

test("2025-11-25: a client without elicitation waits for the owner on /approvals", async () => {
  const c = await mcpClient(h.url, { token });
  const call = c.call("mail_send", { to: "erin@example.com", subject: "Hello", body: "Hi." });
  let waiting: any[] = [];
  while (!waiting.length) {
    waiting = ((await (await fetch(`${h.url}/approvals`, { headers: { cookie: s.cookie } })).json()) as any).result.waiting;
    if (!waiting.length) await Bun.sleep(20);
  }
  expect(waiting[0].client).toBe("Desk assistant");
  const res = await fetch(`${h.url}/approvals/decide`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie: s.cookie, "x-csrf-token": s.csrf },
    body: JSON.stringify({ id: waiting[0].id, decision: "approve" }),
  });
  expect(res.status).toBe(200);
  const r = await call;
  expect(r.isError).toBeFalsy();
  expect((await relay.next()).to).toEqual(["erin@example.com"]);
  await c.close();
});
