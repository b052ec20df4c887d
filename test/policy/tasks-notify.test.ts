// MCP tasks tell their client when they change: a 2025-11-25 session over
// HTTP, whose client holds its GET stream open, gets
// notifications/tasks/status (the task as tasks/get shows it) when the owner
// answers, when the call runs and when it is settled, declined or cancelled;
// polling gives the same task all the same, as the spec has clients rely on.
// A 2026-07-28 request keeps no connection to tell later, and gets none.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CallToolResultSchema, CreateTaskResultSchema, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { mcpClient, PATIENT } from "../mcp/client.ts";
import { startHeld, type Held } from "./held.ts";

const dir = mkdtempSync(join(tmpdir(), "hearth-tasks-notify-"));
let held: Held;
let token: string;

beforeAll(async () => {
  held = await startHeld({ approvalSeconds: 300, dataDir: dir });
  token = await held.asking("Watching assistant");
});
afterAll(async () => {
  await held.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A session client that keeps every notifications/tasks/status it is sent (the SDK checks each against the spec's schema). */
async function watchingClient() {
  const c = await mcpClient(held.h.url, { token });
  const told: any[] = [];
  c.client.setNotificationHandler(TaskStatusNotificationSchema, (n) => void told.push(n.params));
  /** The notification about `id` that `pass` accepts, once it has come. */
  const toldOf = async (id: string, pass: (p: any) => boolean) => {
    for (;;) {
      const found = told.find((p) => p.taskId === id && pass(p));
      if (found) return found;
      await Bun.sleep(20);
    }
  };
  return { ...c, told, toldOf };
}

const mail = (to: string) => ({ name: "mail_send", arguments: { to, subject: "Plans", body: "See you there." } });

test("approved: the session is told the owner answered, then that the call ran; polling shows the same", async () => {
  const c = await watchingClient();
  const before = await held.charged();
  const created = await c.client.request({ method: "tools/call", params: { ...mail("nora@example.com"), task: { ttl: 3_600_000 } } }, CreateTaskResultSchema, PATIENT);
  const id = created.task.taskId;
  await held.decide((await held.waitingFor("nora@example.com")).id, "approve");
  // Told of the answer while the task still waits for the client's next poll, which runs the call.
  const answered = await c.toldOf(id, (p) => p.statusMessage?.startsWith("Approved by the owner"));
  expect(answered.status).toBe("working");
  expect(await held.charged()).toEqual(before);
  const result = (await c.client.experimental.tasks.getTaskResult(id, CallToolResultSchema, PATIENT)) as any;
  expect(result.isError).toBeFalsy();
  const done = await c.toldOf(id, (p) => p.status === "completed");
  // The notification carries the task as tasks/get gives it.
  const polled = await c.client.experimental.tasks.getTask(id, PATIENT);
  expect(polled.status).toBe("completed");
  expect({ ...done, _meta: undefined }).toEqual({ ...polled, _meta: undefined });
  const order = c.told.filter((p) => p.taskId === id).map((p) => p.status);
  expect(order.indexOf("completed")).toBe(order.length - 1);
  expect((await held.charged()).slice(before.length)).toEqual([["mail/send", -4]]);
  await c.close();
});

test("declined: the session is told, and the task fails on the next poll with nothing sent or charged", async () => {
  const c = await watchingClient();
  const before = await held.charged();
  const created = await c.client.request({ method: "tools/call", params: { ...mail("otto@example.com"), task: { ttl: 3_600_000 } } }, CreateTaskResultSchema, PATIENT);
  const id = created.task.taskId;
  await held.decide((await held.waitingFor("otto@example.com")).id, "decline");
  expect((await c.toldOf(id, (p) => p.statusMessage?.startsWith("Declined by the owner"))).status).toBe("working");
  expect((await c.client.experimental.tasks.getTask(id, PATIENT)).status).toBe("failed");
  expect((await c.toldOf(id, (p) => p.status === "failed")).statusMessage).toContain("declined");
  expect(await held.charged()).toEqual(before);
  expect(await held.h.rows("SELECT id FROM mail_outbox WHERE recipient = 'otto@example.com'")).toEqual([]);
  await c.close();
});

test("cancelled by the client: the session is told it is cancelled", async () => {
  const c = await watchingClient();
  const created = await c.client.request({ method: "tools/call", params: { ...mail("pia@example.com"), task: { ttl: 3_600_000 } } }, CreateTaskResultSchema, PATIENT);
  const id = created.task.taskId;
  await held.waitingFor("pia@example.com");
  expect((await c.client.experimental.tasks.cancelTask(id, PATIENT)).status).toBe("cancelled");
  expect((await c.toldOf(id, (p) => p.status === "cancelled")).statusMessage).toContain("Cancelled");
  expect(await held.h.rows("SELECT id FROM mail_outbox WHERE recipient = 'pia@example.com'")).toEqual([]);
  await c.close();
});
