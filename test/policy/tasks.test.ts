// one store: MCP tasks' wire shapes in both eras; holding a call for the owner's approval, and approving or declining it, run on both stores in test/policy (policy, elicit, limits)
// MCP tasks: a call its token's policy holds for the owner answers at once
// with a task the client polls, in both protocol eras: 2025-11-25 through the
// SDK's own client (tools/call with `task`, tasks/get, tasks/result,
// tasks/list, tasks/cancel), 2026-07-28 as the Tasks extension's wire shapes
// (resultType "task", tasks/get with the result inline, tasks/cancel). The
// call runs once its approval is settled, on the poll that finds it so:
// approved, the mail goes and is charged once however often the client
// polls; declined, withdrawn by tasks/cancel, or out of time, nothing goes
// and nothing is charged. A task is its credential's alone, and it is kept
// in the store, so a restart does not lose a pending one.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { signUp } from "../auth/people.ts";
import { TestClock } from "../harness.ts";
import { mcpClient, PATIENT, rpc } from "../mcp/client.ts";
import { modernWire, startHeld, type Held } from "./held.ts";

const MODERN = "2026-07-28";
const TASKS = "io.modelcontextprotocol/tasks";
const clock = new TestClock();
const dir = mkdtempSync(join(tmpdir(), "hearth-tasks-"));
let held: Held;
let h: Held["h"];
let token: string;
let other: string;

beforeAll(async () => {
  held = await startHeld({ approvalSeconds: 300, clock, dataDir: dir });
  h = held.h;
  token = await held.asking("Night assistant");
  other = await held.asking("Other script");
});
afterAll(async () => {
  await held.stop();
  rmSync(dir, { recursive: true, force: true });
});

const charged = () => held.charged();
const waitingFor = (to: string) => held.waitingFor(to);
const decide = (id: string, decision: "approve" | "decline") => held.decide(id, decision);
const post = (path: string, body: unknown) => held.post(path, body);

test("2025-11-25: the SDK client's task waits for the owner, who approves; the mail goes, charged once however often it polls", async () => {
  const c = await mcpClient(h.url, { token });
  const tools = await c.client.listTools();
  expect(tools.tools.find((t) => t.name === "mail_send")?.execution).toEqual({ taskSupport: "optional" });
  expect(c.client.getServerCapabilities()?.tasks).toMatchObject({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
  const before = await charged();
  const seen: any[] = [];
  const stream = c.client.experimental.tasks.callToolStream({ name: "mail_send", arguments: { to: "carol@example.com", subject: "Minutes", body: "Tuesday's minutes." } }, CallToolResultSchema, {
    ...PATIENT,
    task: { ttl: 3_600_000 },
  });
  let result: any;
  for await (const m of stream) {
    seen.push(m);
    if (m.type === "taskCreated") {
      expect(m.task.status).toBe("working");
      // Nothing is charged or sent while it waits.
      expect(await charged()).toEqual(before);
      await decide((await waitingFor("carol@example.com")).id, "approve");
    }
    if (m.type === "result") result = m.result;
    if (m.type === "error") throw m.error;
  }
  expect(seen[0].type).toBe("taskCreated");
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent.result).toBeDefined();
  expect((await held.relay.next()).to).toEqual(["carol@example.com"]);
  const id = seen[0].task.taskId;
  // Polled and read again and again: the call ran once.
  for (let i = 0; i < 3; i++) {
    expect((await c.client.experimental.tasks.getTask(id, PATIENT)).status).toBe("completed");
    const again = (await c.client.experimental.tasks.getTaskResult(id, CallToolResultSchema, PATIENT)) as any;
    expect(again._meta["io.modelcontextprotocol/related-task"]).toEqual({ taskId: id });
    expect(again.structuredContent).toEqual(result.structuredContent);
  }
  expect((await charged()).slice(before.length)).toEqual([["mail/send", -4]]);
  expect(await h.rows("SELECT id FROM mail_outbox WHERE recipient = 'carol@example.com'")).toHaveLength(1);
  // Its arguments are not kept once it has run.
  expect(await h.row("SELECT status, args FROM mcp_tasks WHERE id = ?", id)).toEqual({ status: "completed", args: null });
  await c.close();
});

/** A task-augmented tools/call through the SDK client, answered at once with the task. */
async function opened(c: Awaited<ReturnType<typeof mcpClient>>, to: string, subject = "Hi") {
  const r = (await c.client.request(
    { method: "tools/call", params: { name: "mail_send", arguments: { to, subject, body: "Hello." }, task: { ttl: 3_600_000 } } },
    CreateTaskResultSchema,
    PATIENT,
  )) as any;
  expect(r.task.status).toBe("working");
  expect(r.task.pollInterval).toBeGreaterThan(0);
  expect(r._meta["io.modelcontextprotocol/model-immediate-response"]).toContain("waits for the owner's approval");
  return r.task.taskId as string;
}

test("2025-11-25: declined, the task fails with the refusal a held call gets; nothing sent or charged", async () => {
  const c = await mcpClient(h.url, { token });
  const before = await charged();
  const id = await opened(c, "dave@example.com", "Offer");
  await decide((await waitingFor("dave@example.com")).id, "decline");
  const t = await c.client.experimental.tasks.getTask(id, PATIENT);
  expect(t.status).toBe("failed");
  expect(t.statusMessage).toContain("declined by the owner");
  const r = (await c.client.experimental.tasks.getTaskResult(id, CallToolResultSchema, PATIENT)) as any;
  expect(r.isError).toBe(true);
  expect(r.structuredContent.error).toMatchObject({ status: 403, kind: "forbidden", approval: "declined" });
  expect(await h.rows("SELECT id FROM mail_outbox WHERE recipient = 'dave@example.com'")).toEqual([]);
  expect(await charged()).toEqual(before);
  await c.close();
});

test("2025-11-25: tasks/cancel withdraws the approval request; the owner can no longer approve it, and nothing runs", async () => {
  const c = await mcpClient(h.url, { token });
  const before = await charged();
  const id = await opened(c, "erin@example.com");
  const asked = await waitingFor("erin@example.com");
  const cancelled = await c.client.experimental.tasks.cancelTask(id, PATIENT);
  expect(cancelled.status).toBe("cancelled");
  expect(await h.row("SELECT decision FROM approvals WHERE id = ?", asked.id)).toEqual({ decision: "withdrawn" });
  // Gone from what waits for the owner, and too late to approve.
  expect((await post("/approvals/decide", { id: asked.id, decision: "approve" })).status).toBe(409);
  expect((await c.client.experimental.tasks.getTask(id, PATIENT)).status).toBe("cancelled");
  const r = (await c.client.experimental.tasks.getTaskResult(id, CallToolResultSchema, PATIENT)) as any;
  expect(r.structuredContent.error).toMatchObject({ status: 403, approval: "withdrawn" });
  // A settled task cannot be cancelled again.
  await expect(c.client.experimental.tasks.cancelTask(id, PATIENT)).rejects.toMatchObject({ code: -32602 });
  expect(await h.rows("SELECT id FROM mail_outbox WHERE recipient = 'erin@example.com'")).toEqual([]);
  expect(await charged()).toEqual(before);
  await c.close();
});

test("2025-11-25: a task is its credential's alone: another token, or another person's, can neither see nor cancel it", async () => {
  const mine = await mcpClient(h.url, { token });
  const id = await opened(mine, "fran@example.com");
  const bob = await signUp(h, "bob");
  const bobs = await fetch(`${h.url}/token`, { method: "POST", headers: { "content-type": "application/json", cookie: bob.cookie, "x-csrf-token": bob.csrf }, body: JSON.stringify({ name: "Bob's script" }) });
  const strangers = [await mcpClient(h.url, { token: other }), await mcpClient(h.url, { token: ((await bobs.json()) as any).result.token })];
  for (const them of strangers) {
    await expect(them.client.experimental.tasks.getTask(id, PATIENT)).rejects.toMatchObject({ code: -32602 });
    await expect(them.client.experimental.tasks.getTaskResult(id, CallToolResultSchema, PATIENT)).rejects.toMatchObject({ code: -32602 });
    await expect(them.client.experimental.tasks.cancelTask(id, PATIENT)).rejects.toMatchObject({ code: -32602 });
    expect((await them.client.experimental.tasks.listTasks(undefined, PATIENT)).tasks.map((t) => t.taskId)).not.toContain(id);
    await them.close();
  }
  // Still the owner's to answer, and its own client's to see.
  expect((await mine.client.experimental.tasks.getTask(id, PATIENT)).status).toBe("working");
  expect((await mine.client.experimental.tasks.listTasks(undefined, PATIENT)).tasks.map((t) => t.taskId)).toContain(id);
  await mine.client.experimental.tasks.cancelTask(id, PATIENT);
  await mine.close();
});

test("2025-11-25: unanswered in time, the task fails cleanly on the instance's clock; nothing sent or charged", async () => {
  const c = await mcpClient(h.url, { token });
  const before = await charged();
  const id = await opened(c, "gil@example.com");
  const asked = await waitingFor("gil@example.com");
  clock.advance(299_000);
  expect((await c.client.experimental.tasks.getTask(id, PATIENT)).status).toBe("working");
  clock.advance(2_000);
  const t = await c.client.experimental.tasks.getTask(id, PATIENT);
  expect(t.status).toBe("failed");
  const r = (await c.client.experimental.tasks.getTaskResult(id, CallToolResultSchema, PATIENT)) as any;
  expect(r.structuredContent.error).toMatchObject({ status: 403, approval: "timed_out" });
  expect(r.structuredContent.error.message).toContain("waited 300 s");
  expect(await h.row("SELECT decision FROM approvals WHERE id = ?", asked.id)).toEqual({ decision: "expired" });
  expect(await charged()).toEqual(before);
  // Past its ttl the task is gone.
  clock.advance(3_600_000);
  await expect(c.client.experimental.tasks.getTask(id, PATIENT)).rejects.toMatchObject({ code: -32602 });
  await c.close();
});

test("2025-11-25: a pending task outlives a restart: approved after it, the next poll runs the call", async () => {
  const c = await mcpClient(h.url, { token });
  const id = await opened(c, "hal@example.com");
  const asked = await waitingFor("hal@example.com");
  await c.close();
  await held.restart();
  h = held.h;
  const before = await charged();
  await decide(asked.id, "approve");
  const again = await mcpClient(h.url, { token });
  const t = await again.client.experimental.tasks.getTask(id, PATIENT);
  expect(t.status).toBe("completed");
  expect(((await again.client.experimental.tasks.getTaskResult(id, CallToolResultSchema, PATIENT)) as any).isError).toBeFalsy();
  expect((await held.relay.next()).to).toEqual(["hal@example.com"]);
  expect((await charged()).slice(before.length)).toEqual([["mail/send", -4]]);
  await again.close();
});

/** Takes any JSON back, in the Standard Schema shape the SDK 2.x client checks results with. */
const anyJson = { "~standard": { version: 1 as const, vendor: "test", validate: (value: unknown) => ({ value }) } };

/** An SDK 2.x client pinned to 2026-07-28 that declares the Tasks extension: tasks/get and tasks/cancel go through it. */
async function modern(bearer = token) {
  const client = new ClientV2({ name: "tasks-test", version: "1.0.0" }, { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: { pin: MODERN } } } as any);
  await client.connect(new HttpV2(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${bearer}` } } }));
  return {
    client,
    get: (taskId: string) => client.request({ method: "tasks/get", params: { taskId } } as any, anyJson as any) as Promise<any>,
    cancel: (taskId: string) => client.request({ method: "tasks/cancel", params: { taskId } } as any, anyJson as any) as Promise<any>,
  };
}

/**
 * A 2026-07-28 request by hand, as the extension's examples write it: the
 * SDK 2.x client (2.4.0) refuses a result whose resultType is "task" before
 * its caller sees it, and the extension's own client is not published.
 */
const wire = (method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = { extensions: { [TASKS]: {} } }, status = 200) =>
  modernWire(h.url, token, method, params, capabilities, status);

const send2026 = async (to: string) => {
  const r = (await wire("tools/call", { name: "mail_send", arguments: { to, subject: "Hi", body: "Hello." } })).result;
  expect(r).toMatchObject({ resultType: "task", status: "working", ttlMs: expect.any(Number), pollIntervalMs: expect.any(Number) });
  expect(r.content).toBeUndefined();
  return r.taskId as string;
};

test("2026-07-28: the server answers with a task, the SDK client polls it, the owner approves; the result comes inline, charged once", async () => {
  const c = await modern();
  expect(c.client.getServerCapabilities()?.extensions?.[TASKS]).toEqual({});
  const before = await charged();
  const id = await send2026("ivy@example.com");
  expect((await c.get(id)).status).toBe("working");
  await decide((await waitingFor("ivy@example.com")).id, "approve");
  for (let i = 0; i < 3; i++) {
    const t = await c.get(id);
    expect(t.status).toBe("completed");
    expect(t.result.isError).toBeFalsy();
    expect(t.result.structuredContent.result).toBeDefined();
  }
  expect((await held.relay.next()).to).toEqual(["ivy@example.com"]);
  expect((await charged()).slice(before.length)).toEqual([["mail/send", -4]]);
  // A call that waits on no one is answered as it is.
  const free = (await wire("tools/call", { name: "notes_add", arguments: { title: "Plain", text: "No approval needed." } })).result;
  expect(free.resultType).toBe("complete");
  expect(free.isError).toBeFalsy();
  await c.client.close();
});

test("2026-07-28: declined, the task completes with the refusal as its tool result; cancelled, it is acknowledged and withdrawn", async () => {
  const c = await modern();
  const before = await charged();
  const no = await send2026("jon@example.com");
  await decide((await waitingFor("jon@example.com")).id, "decline");
  const t = await c.get(no);
  expect(t.status).toBe("completed");
  expect(t.result.isError).toBe(true);
  expect(t.result.structuredContent.error).toMatchObject({ status: 403, kind: "forbidden", approval: "declined" });
  const gone = await send2026("kim@example.com");
  const asked = await waitingFor("kim@example.com");
  // Acknowledged with an empty result (the SDK keeps the server's stamp in _meta).
  const ack = await c.cancel(gone);
  expect(Object.keys(ack).filter((k) => k !== "_meta")).toEqual([]);
  expect((await c.get(gone)).status).toBe("cancelled");
  expect(await h.row("SELECT decision FROM approvals WHERE id = ?", asked.id)).toEqual({ decision: "withdrawn" });
  expect(await h.rows("SELECT id FROM mail_outbox WHERE recipient IN ('jon@example.com', 'kim@example.com')")).toEqual([]);
  expect(await charged()).toEqual(before);
  await c.client.close();
});

test("2026-07-28: another credential's tasks are not found, and a client that did not declare the extension is told what it lacks", async () => {
  const id = await send2026("lee@example.com");
  const them = await modern(other);
  await expect(them.get(id)).rejects.toMatchObject({ code: -32602 });
  await expect(them.cancel(id)).rejects.toMatchObject({ code: -32602 });
  await them.client.close();
  // The SDK's transport answers this error with 400, beside its JSON-RPC body.
  const undeclared = await wire("tasks/get", { taskId: id }, {}, 400);
  expect(undeclared.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } });
  expect((await wire("tasks/get", { taskId: id })).result.status).toBe("working");
  expect(await wire("tasks/cancel", { taskId: id })).toMatchObject({ result: {} });
});

test("polled by many at once after approval, the call runs once and is charged once; a call that waits on no one is a task already done", async () => {
  const c = await mcpClient(h.url, { token });
  const before = await charged();
  const id = await opened(c, "max@example.com");
  await decide((await waitingFor("max@example.com")).id, "approve");
  const polls = await Promise.all([
    ...Array.from({ length: 6 }, () => c.client.experimental.tasks.getTask(id, PATIENT)),
    c.client.experimental.tasks.getTaskResult(id, CallToolResultSchema, PATIENT),
    (async () => (await modern()).get(id))().catch((e) => e),
  ]);
  expect(polls.length).toBe(8);
  const t = await c.client.experimental.tasks.getTask(id, PATIENT);
  expect(t.status).toBe("completed");
  expect(await h.rows("SELECT id FROM mail_outbox WHERE recipient = 'max@example.com'")).toHaveLength(1);
  expect((await charged()).slice(before.length)).toEqual([["mail/send", -4]]);
  // Asked for a task, a call its policy lets through runs at once, and its task is already done.
  const free = (await c.client.request(
    { method: "tools/call", params: { name: "notes_add", arguments: { title: "Quick", text: "No approval." }, task: {} } },
    CreateTaskResultSchema,
    PATIENT,
  )) as any;
  expect(free.task.status).toBe("completed");
  expect(((await c.client.experimental.tasks.getTaskResult(free.task.taskId, CallToolResultSchema, PATIENT)) as any).structuredContent.result.title).toBe("Quick");
  await c.close();
});

test("what was charged for the mail is what ran: one charge per message sent, none for those declined, cancelled or out of time", async () => {
  const sent = await h.rows<{ n: number }>("SELECT COUNT(*) AS n FROM mail_outbox");
  const mailCharges = (await charged()).filter(([m]) => m === "mail/send");
  expect(mailCharges.length).toBe(Number(sent[0].n));
  expect(mailCharges.every(([, d]) => d === -4)).toBe(true);
});

test("2025-11-25 without a session, as curl sends it: the task is answered, then found by a later request of the same token", async () => {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` };
  const made = await rpc(h.url, "tools/call", { name: "mail_send", arguments: { to: "ned@example.com", subject: "Hi", body: "Hello." }, task: { ttl: 60_000 } }, headers);
  expect(made.status).toBe(200);
  const task = made.body.result.task;
  expect(task.status).toBe("working");
  // The ttl asked is raised to what an approval may take to answer, and a minute more.
  expect(task.ttl).toBe(360_000);
  const got = await rpc(h.url, "tasks/get", { taskId: task.taskId }, headers);
  expect(got.body.result).toMatchObject({ taskId: task.taskId, status: "working" });
  const listed = await rpc(h.url, "tasks/list", {}, headers);
  expect(listed.body.result.tasks.map((t: any) => t.taskId)).toContain(task.taskId);
  const cancelled = await rpc(h.url, "tasks/cancel", { taskId: task.taskId }, headers);
  expect(cancelled.body.result.status).toBe("cancelled");
  // Without a token there is no credential to own a task: refused, and nothing runs.
  const { authorization: _, ...anonymous } = headers;
  const stranger = await rpc(h.url, "tools/call", { name: "weather_forecast", arguments: { lat: 51.5, lon: -0.1 }, task: {} }, anonymous);
  expect(stranger.body.error).toMatchObject({ code: -32602, data: { field: "task" } });
  expect(stranger.body.error.message).toContain("Bearer token");
});

test("2025-11-25: tasks/result asked before the owner answers waits for the answer, then gives the result of the call it ran", async () => {
  const c = await mcpClient(h.url, { token });
  const id = await opened(c, "olga@example.com");
  const result = c.client.experimental.tasks.getTaskResult(id, CallToolResultSchema, PATIENT) as Promise<any>;
  await decide((await waitingFor("olga@example.com")).id, "approve");
  const r = await result;
  expect(r.isError).toBeFalsy();
  expect(r._meta["io.modelcontextprotocol/related-task"]).toEqual({ taskId: id });
  expect(await h.rows("SELECT id FROM mail_outbox WHERE recipient = 'olga@example.com'")).toHaveLength(1);
  await c.close();
});
