// The agent acts with at most the scopes of whoever set it working: a task
// assigned to it, or mail to handle+name, runs with the scopes of the token
// that made the task or sent the mail, never with the whole account's.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mailOf } from "../../core/mail/index.ts";
import { workerFor } from "../../plugins/agent/worker.ts";
import { startOpenAiFixture, type OpenAiFixture } from "../fixtures/openai/server.ts";
import { startHearth, type Hearth } from "../harness.ts";

let ai: OpenAiFixture;
let h: Hearth;
let full: string;
let tasksOnly: string;
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
  mailOnly = await h.token("alice", { scopes: ["mail"] });
  await h.token("bob");
});
afterAll(async () => {
  await h.stop();
  ai.stop();
});

describe("tasks assigned to the agent", () => {
  test("set by a token scoped to tasks: the model's notes_add and mail_send are refused and nothing is written", async () => {
    const task = (await h.call("tasks/create", { title: "Tidy up", assignee: "agent" }, { token: tasksOnly })).body.result;
    expect(task.scopes).toEqual(["tasks"]);
    const before = ai.posts.length;
    script("From a tasks token");
    expect(await workerFor(h.rt)!.pass()).toEqual([task.id]);
    const offered = toolNames(ai.posts[before]);
    expect(offered.length).toBeGreaterThan(0);
    expect(offered.every((n) => n.startsWith("tasks_"))).toBe(true);
    expect(toolResults(ai.posts[before + 1]).map((r: any) => r.error?.kind)).toEqual(["not_found", "not_found"]);
    expect(await noteCalled("From a tasks token")).toBe(404);
    expect((await bobInbox()).some((m) => m.subject === "About From a tasks token")).toBe(false);
    const after = (await h.call("tasks/list", {}, { token: full })).body.result.find((t: any) => t.id === task.id);
    expect(after).toMatchObject({ status: "done", scopes: ["tasks"] });
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
    const changed = (await h.call("tasks/update", { id: task.id, detail: "and also write a note" }, { token: tasksOnly })).body.result;
    expect(changed.scopes).toEqual(["tasks"]);
    // Widening needs a new task: a full token changing it again does not undo what the narrow one asked for.
    expect((await h.call("tasks/update", { id: task.id, title: "Later on" }, { token: full })).body.result.scopes).toEqual(["tasks"]);
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
