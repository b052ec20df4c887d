// one store: MCP 2026-07-28's approval round trip on the wire; asking for, approving and declining a held call run on both stores in test/policy (policy, elicit, limits)
// MCP 2026-07-28 has no server-to-client requests: an approval is asked in
// the answer (resultType "input_required", an elicitation in inputRequests,
// requestState naming the approval), and the client calls again with the
// reply. The SDK 2.x client does that round trip itself; accepted, the mail
// goes and is charged once; declined, nothing goes and the tool answers 403.
// The reply binds to its call: other arguments, or the same approval a
// second time, run nothing. A client that declared only URL mode is sent to
// /approvals, where the owner's answer decides; both eras.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { mcpClient } from "../mcp/client.ts";
import { modernWire, startHeld, type Held } from "./held.ts";

const MODERN = "2026-07-28";
let held: Held;
let h: Held["h"];
let token: string;

beforeAll(async () => {
  held = await startHeld({ approvalSeconds: 120 });
  h = held.h;
  token = await held.asking("Stateless assistant");
});
afterAll(() => held.stop());

const charged = () => held.charged();

/** An SDK 2.x client pinned to 2026-07-28, declaring `elicitation`, whose person answers with `reply`. */
async function modern(elicitation: { form?: {}; url?: {} }, reply: (params: any) => any) {
  const client = new ClientV2({ name: "stateless-test", version: "1.0.0" }, { capabilities: { elicitation }, versionNegotiation: { mode: { pin: MODERN } } });
  const asked: any[] = [];
  client.setRequestHandler("elicitation/create", async (req: any) => {
    asked.push(req.params);
    return reply(req.params);
  });
  await client.connect(new HttpV2(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return { client, asked, call: (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<any> };
}

/** One 2026-07-28 tools/call by hand, as the spec's examples write them. */
const wire = async (params: Record<string, unknown>, elicitation: Record<string, object> = { form: {} }) => (await modernWire(h.url, token, "tools/call", params, { elicitation })).result;

test("2026-07-28: the SDK client is asked in the answer, accepts, calls again, and the mail goes, charged once", async () => {
  const c = await modern({ form: {} }, () => ({ action: "accept", content: { approve: true } }));
  const before = await charged();
  const r = await c.call("mail_send", { to: "carol@example.com", subject: "Minutes", body: "Tuesday's minutes." });
  expect(r.isError).toBeFalsy();
  expect(c.asked.length).toBe(1);
  expect(c.asked[0].message).toContain("Allow Stateless assistant to call mail/send?");
  expect(c.asked[0].requestedSchema.properties.approve.type).toBe("boolean");
  expect((await held.relay.next()).to).toEqual(["carol@example.com"]);
  expect((await charged()).slice(before.length)).toEqual([["mail/send", -4]]);
  const row = await h.row("SELECT decision, decided_by, used FROM approvals ORDER BY created DESC LIMIT 1");
  expect(row).toMatchObject({ decision: "approved", decided_by: "alice, at Stateless assistant" });
  expect(row!.used).not.toBeNull();
  await c.client.close();
});

test("2026-07-28: declined in the round trip, no mail, no charge, and 403", async () => {
  const c = await modern({ form: {} }, () => ({ action: "decline" }));
  const before = await charged();
  const sent = held.relay.received.length;
  const r = await c.call("mail_send", { to: "dave@example.com", subject: "Offer", body: "Not this one." });
  expect(r.isError).toBe(true);
  expect(r.structuredContent.error).toMatchObject({ status: 403, kind: "forbidden", approval: "declined" });
  expect(c.asked.length).toBe(1);
  expect(await h.rows("SELECT id FROM mail_outbox WHERE recipient = 'dave@example.com'")).toEqual([]);
  expect(held.relay.received.length).toBe(sent);
  expect(await charged()).toEqual(before);
  await c.client.close();
});

test("2026-07-28 on the wire: input_required, then the reply; other arguments or a second use run nothing", async () => {
  const args = { to: "erin@example.com", subject: "Hi", body: "Hello." };
  const first = await wire({ name: "mail_send", arguments: args });
  expect(first.resultType).toBe("input_required");
  expect(first.inputRequests.approval).toMatchObject({ method: "elicitation/create", params: { mode: "form" } });
  expect(first.inputRequests.approval.params.message).toContain("to: erin@example.com");
  expect(typeof first.requestState).toBe("string");
  const yes = { approval: { action: "accept", content: { approve: true } } };
  // The reply sent with other arguments answers nothing: refused, and the approval still waits.
  const other = await wire({ name: "mail_send", arguments: { ...args, to: "mallory@example.com" }, inputResponses: yes, requestState: first.requestState });
  expect(other.isError).toBe(true);
  expect(other.structuredContent.error).toMatchObject({ status: 403, approval: "mismatch" });
  const before = await charged();
  const done = await wire({ name: "mail_send", arguments: args, inputResponses: yes, requestState: first.requestState });
  expect(done.resultType).toBe("complete");
  expect(done.isError).toBeFalsy();
  expect((await held.relay.next()).to).toEqual(["erin@example.com"]);
  // The same reply again: the approval was used.
  const again = await wire({ name: "mail_send", arguments: args, inputResponses: yes, requestState: first.requestState });
  expect(again.structuredContent.error).toMatchObject({ status: 403, approval: "used" });
  expect((await charged()).slice(before.length)).toEqual([["mail/send", -4]]);
  expect(await h.rows("SELECT id FROM mail_outbox WHERE recipient = 'mallory@example.com'")).toEqual([]);
});

/** Approves on /approvals, as the owner does, the request waiting for `to`. */
async function approveOnPage(to: string) {
  const found = await held.waitingFor(to);
  await held.decide(found.id, "approve");
  return found;
}

test("2026-07-28, URL mode: the client is sent to the request on /approvals, and the owner's answer there lets it run", async () => {
  const c = await modern({ url: {} }, () => ({ action: "accept" }));
  const call = c.call("mail_send", { to: "fran@example.com", subject: "Hi", body: "Hello." });
  const found = await approveOnPage("fran@example.com");
  const r = await call;
  expect(r.isError).toBeFalsy();
  expect(c.asked.length).toBe(1);
  expect(c.asked[0].mode).toBe("url");
  expect(c.asked[0].url).toBe(`${h.url}/approvals#ask-${found.id}`);
  expect((await held.relay.next()).to).toEqual(["fran@example.com"]);
  await c.client.close();
});

test("2025-11-25, URL mode: the session's client is sent to /approvals, and the owner's answer there decides", async () => {
  const c = await mcpClient(h.url, { token, capabilities: { elicitation: { url: {} } } });
  const asked: any[] = [];
  c.client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params);
    return { action: "accept" };
  });
  const call = c.call("mail_send", { to: "gil@example.com", subject: "Hi", body: "Hello." });
  const found = await approveOnPage("gil@example.com");
  const r = (await call) as any;
  expect(r.isError).toBeFalsy();
  expect(asked[0]).toMatchObject({ mode: "url", url: `${h.url}/approvals#ask-${found.id}`, elicitationId: found.id });
  expect((await held.relay.next()).to).toEqual(["gil@example.com"]);
  await c.close();
});
