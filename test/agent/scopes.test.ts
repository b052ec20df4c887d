// one store: which scopes the agent acts with; its tasks, mail and conversations run on both stores in test/agent (agent.test.ts, worker.test.ts)
// The agent acts with at most the scopes of whoever set it working: a task
// assigned to it, or mail to handle+name, runs with the scopes of the token
// that made the task or sent the mail, never with the whole account's; a task
// runs only when those scopes name the agent, as an event's prompt does.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mailOf } from "../../core/mail/index.ts";
import { workerFor } from "../../plugins/agent/worker.ts";
import { startOpenAiFixture, type OpenAiFixture } from "../fixtures/openai/server.ts";
import { startHearth, type Hearth } from "../harness.ts";

let ai: OpenAiFixture;
let h: Hearth;
let full: string;
let tasksOnly: string;
let tasksAgent: string;
let mailOnly: string;

const toolNames = (post: { body: any }) => (post.body.tools ?? []).map((t: any) => t.function.name) as string[];
const toolResults = (post: { body: any }) => post.body.messages.filter((m: any) => m.role === "tool").map((m: any) => JSON.parse(m.content));
const noteCalled = async (title: string) => (await h.call("notes/get", { title }, { token: full })).status;
const bobInbox = async () => (await h.call("mail/inbox", { limit: 50 }, { token: await h.token("bob") })).body.result as { subject: string }[];

/** The model asks for notes_add and mail_send, then answers. */
function script(note: string) {
  ai.reply(
    {
      calls: [
        { name: "notes_add", arguments: JSON.stringify({ title: note, text: "written by the agent" }) },
        { name: "mail_send", arguments: JSON.stringify({ to: "bob", subject: `About ${note}`, body: "from the agent" }) },
      ],
    },
    { say: "Done." },
  );
}

beforeAll(async () => {
  ai = await startOpenAiFixture();
  h = await startHearth({ env: { AI_BASE_URL: ai.base, AI_MODEL: "m", AI_OLLAMA_URL: "", UPSTREAM_RETRY_MS: "0", HEARTH_METERING: "off", AGENT_WORKER_SECONDS: "3600" } });
  full = await h.token("alice");
  tasksOnly = await h.token("alice", { scopes: ["tasks"] });
  tasksAgent = await h.token("alice", { scopes: ["tasks", "agent"] });
  mailOnly = await h.token("alice", { scopes: ["mail"] });
  await h.token("bob");
});
afterAll(async () => {
  await h.stop();
  ai.stop();
});

describe("tasks assigned to the agent", () => {
  test("set by a token scoped to tasks alone: the agent is not set working, as an event's prompt is not; the task says why", async () => {
    const task = (await h.call("tasks/create", { title: "Tidy up", assignee: "agent" }, { token: tasksOnly })).body.result;
    expect(task.scopes).toEqual(["tasks"]);
    const before = ai.posts.length;
    expect(await workerFor(h.rt)!.pass()).toEqual([task.id]);
    // The model was never asked: nothing ran, nothing was written or sent.
    expect(ai.posts.length).toBe(before);
    expect(await noteCalled("From a tasks token")).toBe(404);
    expect((await bobInbox()).some((m) => m.subject === "About From a tasks token")).toBe(false);
    const after = (await h.call("tasks/list", {}, { token: full })).body.result.find((t: any) => t.id === task.id);
    expect(after).toMatchObject({ status: "todo", scopes: ["tasks"] });
    expect(after.result).toContain('does not include "agent"');
    // Left as it is, it is not tried again on the next pass.
    expect(await workerFor(h.rt)!.pass()).toEqual([]);
    expect(ai.posts.length).toBe(before);
  });

  test("set by a token scoped to tasks and agent: the model's notes_add and mail_send are refused and nothing is written", async () => {
    const task = (await h.call("tasks/create", { title: "Tidy up again", assignee: "agent" }, { token: tasksAgent })).body.result;
    expect(task.scopes).toEqual(["tasks", "agent"]);
    const before = ai.posts.length;
    script("From a tasks and agent token");
    expect(await workerFor(h.rt)!.pass()).toEqual([task.id]);
    const offered = toolNames(ai.posts[before]);
    expect(offered.length).toBeGreaterThan(0);
    expect(offered.every((n) => n.startsWith("tasks_"))).toBe(true);
    expect(toolResults(ai.posts[before + 1]).map((r: any) => r.error?.kind)).toEqual(["not_found", "not_found"]);
    expect(await noteCalled("From a tasks and agent token")).toBe(404);
    expect((await bobInbox()).some((m) => m.subject === "About From a tasks and agent token")).toBe(false);
    const after = (await h.call("tasks/list", {}, { token: full })).body.result.find((t: any) => t.id === task.id);
    expect(after).toMatchObject({ status: "done", scopes: ["tasks", "agent"] });
  });

  test("set by a token with every scope: the same calls run", async () => {
    const task = (await h.call("tasks/create", { title: "Write it down", assignee: "agent" }, { token: full })).body.result;
    expect(task.scopes).toBe("*");
    script("From a full token");
    expect(await workerFor(h.rt)!.pass()).toEqual([task.id]);
    expect(await noteCalled("From a full token")).toBe(200);
    expect((await bobInbox()).some((m) => m.subject === "About From a full token")).toBe(true);
  });

  test("a narrower token changing a task narrows what the agent may do on it", async () => {
    const task = (await h.call("tasks/create", { title: "Later", assignee: "agent" }, { token: full })).body.result;
    const changed = (await h.call("tasks/update", { id: task.id, detail: "and also write a note" }, { token: tasksAgent })).body.result;
    expect(changed.scopes).toEqual(["tasks", "agent"]);
    // Widening needs a new task: a full token changing it again does not undo what the narrow one asked for.
    expect((await h.call("tasks/update", { id: task.id, title: "Later on" }, { token: full })).body.result.scopes).toEqual(["tasks", "agent"]);
    script("From an edited task");
    expect(await workerFor(h.rt)!.pass()).toEqual([task.id]);
    expect(await noteCalled("From an edited task")).toBe(404);
  });
});

describe("mail to handle+name", () => {
  test("sent with a token scoped to mail: the model's notes_add is refused", async () => {
    const before = ai.posts.length;
    script("From a mail token");
    expect((await h.call("mail/send", { to: "alice+default", subject: "Jobs", body: "Note this and tell bob." }, { token: mailOnly })).status).toBe(200);
    await mailOf(h.rt).settled();
    expect(ai.posts.length).toBe(before + 2);
    const offered = toolNames(ai.posts[before]);
    expect(offered).toContain("mail_send");
    expect(offered.some((n) => !n.startsWith("mail_"))).toBe(false);
    expect(toolResults(ai.posts[before + 1])[0].error.kind).toBe("not_found");
    expect(await noteCalled("From a mail token")).toBe(404);
  });

  test("sent with a token with every scope: the same call runs", async () => {
    script("From full mail");
    expect((await h.call("mail/send", { to: "alice+default", subject: "Jobs again", body: "Note this and tell bob." }, { token: full })).status).toBe(200);
    await mailOf(h.rt).settled();
    expect(await noteCalled("From full mail")).toBe(200);
    expect((await bobInbox()).some((m) => m.subject === "About From full mail")).toBe(true);
  });
});

describe("what a task assigned to the agent costs", () => {
  test("a task the agent may not take is charged nothing; one it runs is charged for the ask and each tool call that ran, once", async () => {
    const metered = await startHearth({ env: { AI_BASE_URL: ai.base, AI_MODEL: "m", AI_OLLAMA_URL: "", UPSTREAM_RETRY_MS: "0", HEARTH_METER_ACCOUNTS: "all", AGENT_WORKER_SECONDS: "3600" } });
    try {
      const narrow = await metered.token("dora", { scopes: ["tasks"] });
      const wide = await metered.token("dora", { scopes: ["tasks", "agent"] });
      const whole = await metered.token("dora");
      await metered.grant("dora", 50);
      const charges = async () =>
        (await metered.rows<{ delta: number; method: string }>("SELECT delta, method FROM pay_ledger WHERE reason = 'charge' ORDER BY id")).map((r) => [r.method, r.delta]);

      const refused = (await metered.call("tasks/create", { title: "Not for you", assignee: "agent" }, { token: narrow })).body.result;
      const before = ai.posts.length;
      expect(await workerFor(metered.rt)!.pass()).toEqual([refused.id]);
      expect(ai.posts.length).toBe(before);
      expect(await charges()).toEqual([]);
      expect((await metered.call("credits/balance", {}, { token: whole })).body.result.balance).toBe(50);

      const taken = (await metered.call("tasks/create", { title: "For you", assignee: "agent" }, { token: wide })).body.result;
      ai.reply({ calls: [{ name: "tasks_list", arguments: "{}" }] }, { say: "Done." });
      expect(await workerFor(metered.rt)!.pass()).toEqual([taken.id]);
      expect(ai.posts.length).toBe(before + 2);
      const after = (await metered.call("tasks/list", {}, { token: wide })).body.result.find((t: any) => t.id === taken.id);
      expect(after).toMatchObject({ status: "done", result: "Done." });
      // Only agent/ask is priced here: one charge for the one run; the balance is what the ledger says.
      const ran = await charges();
      expect(ran).toEqual([["agent/ask", -2]]);
      expect((await metered.call("credits/balance", {}, { token: whole })).body.result.balance).toBe(50 - 2);
    } finally {
      await metered.stop();
    }
  });
});
