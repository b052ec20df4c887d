// MCP tasks over stdio: `hearth mcp`, acting as a token whose policy holds
// outbound calls for the owner, driven by the SDK's stdio client. The held
// call answers at once with a task; the owner approves on the serving
// instance beside it (the same data folder and database), and the stdio
// process runs the call on the poll that finds it approved: the mail goes
// once and is charged once, and the connection is told of each change.
import "../mcp/patient.ts";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { PATIENT } from "../mcp/client.ts";
import { startHeld, type Held } from "./held.ts";

const root = join(import.meta.dir, "..", "..");
const main = join(root, "core", "cli", "main.ts");
const dir = mkdtempSync(join(tmpdir(), "hearth-tasks-stdio-"));
let held: Held;

beforeAll(async () => {
  held = await startHeld({ approvalSeconds: 300, dataDir: dir });
});
afterAll(async () => {
  await held.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("over stdio, a held call is a task: approved by the owner, the stdio process runs it once, charged once", async () => {
  const token = await held.asking("Stdio assistant");
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [main, "mcp"],
    cwd: root,
    // The serving instance's settings (its mail relay, the approvals' time), its data, and the token to act as.
    env: { ...(process.env as Record<string, string>), ...held.env, ...held.h.env, HEARTH_LOG: "off", HEARTH_TOKEN: token },
    stderr: "pipe",
  });
  const client = new Client({ name: "hearth-stdio-tasks", version: "1.0.0" });
  // Told of each change on the connection (notifications/tasks/status), checked against the spec's schema by the SDK.
  const told: any[] = [];
  client.setNotificationHandler(TaskStatusNotificationSchema, (n) => void told.push(n.params));
  await client.connect(transport, PATIENT);
  try {
    expect(client.getServerCapabilities()?.tasks).toMatchObject({ requests: { tools: { call: {} } } });
    // The client learns which tools take a task from the list, as a client does before it calls one.
    expect((await client.listTools()).tools.find((t) => t.name === "mail_send")?.execution).toEqual({ taskSupport: "optional" });
    const before = await held.charged();
    const seen: any[] = [];
    let result: any;
    for await (const m of client.experimental.tasks.callToolStream({ name: "mail_send", arguments: { to: "erin@example.com", subject: "Notes", body: "From the stdio assistant." } }, CallToolResultSchema, {
      ...PATIENT,
      task: { ttl: 3_600_000 },
    })) {
      seen.push(m);
      if (m.type === "taskCreated") {
        expect(m.task.status).toBe("working");
        expect(await held.charged()).toEqual(before);
        await held.decide((await held.waitingFor("erin@example.com")).id, "approve");
      }
      if (m.type === "result") result = m.result;
      if (m.type === "error") throw m.error;
    }
    expect(seen[0].type).toBe("taskCreated");
    expect(result.isError).toBeFalsy();
    // The stdio process delivers the outside mail it queued at once: the serving instance's outbox is not run here,
    // and its timer would not wake for an hour.
    expect((await held.relay.next()).to).toEqual(["erin@example.com"]);
    const id = seen[0].task.taskId;
    expect((await client.experimental.tasks.getTask(id, PATIENT)).status).toBe("completed");
    // The connection was told the call ran and settled, as polling found (the notification may come after the result).
    while (!told.some((p) => p.taskId === id && p.status === "completed")) await Bun.sleep(20);
    expect(told.filter((p) => p.taskId === id).at(-1)).toMatchObject({ status: "completed", statusMessage: "Done: the call ran and its result is ready." });
    expect((await held.charged()).slice(before.length)).toEqual([["mail/send", -4]]);
    // The stdio process records the delivery: the row is sent, not left claimed for the serving instance to try again.
    const outbox = () => held.h.rows<{ status: string }>("SELECT status FROM mail_outbox WHERE recipient = 'erin@example.com'");
    while ((await outbox())[0]?.status === "pending") await Bun.sleep(20);
    expect(await outbox()).toEqual([{ status: "sent" }]);
  } finally {
    await client.close();
  }
});
