// An MCP client that declared elicitation is asked through it when its
// credential's policy says "ask": the SDK's own client (2025-11-25 session)
// receives a form, and its person's answer decides. Accepted, the mail goes
// over loopback SMTP and is charged; declined, no mail, no charge, and the
// tool answers 403. A client that did not declare it waits for the owner on
// /approvals as any other.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { mcpClient } from "../mcp/client.ts";
import { startHeld, type Held } from "./held.ts";

let held: Held;
let token: string;

beforeAll(async () => {
  held = await startHeld({ approvalSeconds: 120 });
  token = await held.asking("Desk assistant");
});
afterAll(() => held.stop());

/** A client declaring form elicitation whose person answers `answer`; what it was asked is kept. */
async function asking(answer: "accept" | "decline") {
  const c = await mcpClient(held.h.url, { token, capabilities: { elicitation: { form: {} } } });
  const asked: any[] = [];
  c.client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params);
    return answer === "accept" ? { action: "accept", content: { approve: true } } : { action: "decline" };
  });
  return { ...c, asked };
}

test("2025-11-25: accepted through elicitation, the mail goes and is charged once", async () => {
  const c = await asking("accept");
  const before = await held.charged();
  const r = await c.call("mail_send", { to: "carol@example.com", subject: "Minutes", body: "Tuesday's minutes." });
  expect(r.isError).toBeFalsy();
  expect(c.asked.length).toBe(1);
  expect(c.asked[0].mode ?? "form").toBe("form");
  expect(c.asked[0].message).toContain("Allow Desk assistant to call mail/send?");
  expect(c.asked[0].message).toContain("to: carol@example.com");
  expect(c.asked[0].message).toContain("Price: 4 credits");
  expect(c.asked[0].requestedSchema.properties.approve.type).toBe("boolean");
  expect((await held.relay.next()).to).toEqual(["carol@example.com"]);
  expect((await held.charged()).slice(before.length)).toEqual([["mail/send", -4]]);
  const row = await held.h.row("SELECT decision, decided_by FROM approvals ORDER BY created DESC LIMIT 1");
  expect(row).toMatchObject({ decision: "approved", decided_by: "alice, at Desk assistant" });
  await c.close();
});

test("2025-11-25: declined through elicitation, no mail, no charge, and 403", async () => {
  const c = await asking("decline");
  const before = await held.charged();
  const sent = held.relay.received.length;
  const r = await c.call("mail_send", { to: "dave@example.com", subject: "Offer", body: "Not this one." });
  expect(r.isError).toBe(true);
  expect((r.structuredContent as any).error).toMatchObject({ status: 403, kind: "forbidden", approval: "declined" });
  expect(c.asked.length).toBe(1);
  expect(await held.h.rows("SELECT id FROM mail_outbox WHERE recipient = 'dave@example.com'")).toEqual([]);
  expect(held.relay.received.length).toBe(sent);
  expect(await held.charged()).toEqual(before);
  await c.close();
});

test("2025-11-25: a client without elicitation waits for the owner on /approvals", async () => {
  const c = await mcpClient(held.h.url, { token });
  const call = c.call("mail_send", { to: "erin@example.com", subject: "Hello", body: "Hi." });
  const waiting = await held.waitingFor("erin@example.com");
  expect(waiting.client).toBe("Desk assistant");
  await held.decide(waiting.id, "approve");
  const r = await call;
  expect(r.isError).toBeFalsy();
  expect((await held.relay.next()).to).toEqual(["erin@example.com"]);
  await c.close();
});
