// What a firing sends once mail and the agent exist: stand-in mail and agent
// services beside the real events plugin, all called through dispatch.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { schedulerOf } from "../../core/scheduler/index.ts";
import { TestClock } from "../harness.ts";
import { gate } from "./fixtures/agent/index.ts";
import { sent } from "./fixtures/mail/index.ts";
import { pluginPaths, startInstance } from "./instance.ts";
import { sqlAll, sqlGet } from "../sql.ts";

const clock = new TestClock(Date.parse("2026-08-01T07:00:00Z"));
let inst: Awaited<ReturnType<typeof startInstance>>;
let alice: string;

beforeAll(async () => {
  inst = await startInstance({ plugins: [pluginPaths.events, pluginPaths.mail, pluginPaths.agent], clock });
  alice = await inst.token("alice");
});
afterAll(() => inst.stop());

const historyOf = async (id: string, token = alice) =>
  (await inst.call("events/list", {}, token)).body.result.find((e: { id: string }) => e.id === id).history;

test("the owner is mailed the reminder, and the prompt's answer from the agent", async () => {
  sent.length = 0;
  clock.set("2026-08-01T06:00:00Z");
  const ev = (await inst.call("events/create", { title: "Weekly plan", when: "2026-08-01T09:00:00+02:00", note: "the garden", prompt: "What should I plant?" }, alice)).body.result;
  clock.set("2026-08-01T07:00:00Z");
  await schedulerOf(inst.rt).runDue();
  expect(sent).toEqual([
    { from: "alice", to: "alice", subject: "Reminder: Weekly plan", body: "Weekly plan\nWhen: 2026-08-01T09:00:00+02:00 for 30 minutes\n\nthe garden" },
    { from: "alice", to: "alice", subject: "Weekly plan: the answer", body: "alice asked: What should I plant?" },
  ]);
  const [h] = await historyOf(ev.id);
  expect(h.outcome.reminder).toMatchObject({ sent: true, result: { id: "m1" } });
  expect(h.outcome.prompt).toMatchObject({ ran: true, via: "agent/ask", answer: "alice asked: What should I plant?", mail: { sent: true } });
});

test("a firing keeps to the scopes of the token that made the event, plus mail for the reminder", async () => {
  sent.length = 0;
  const eventsOnly = await inst.token("bob", { scopes: ["events"] });
  clock.set("2026-08-02T06:00:00Z");
  const ev = (await inst.call("events/create", { title: "Check\r\nBcc: x@example.com", when: "2026-08-02T07:00:00Z", prompt: "Anything new?" }, eventsOnly)).body.result;
  clock.set("2026-08-02T07:00:00Z");
  await schedulerOf(inst.rt).runDue();
  // A line break in the title never reaches the subject line.
  expect(sent.map((m) => [m.from, m.to, m.subject])).toEqual([["bob", "bob", "Reminder: Check Bcc: x@example.com"]]);
  const [h] = await historyOf(ev.id, eventsOnly);
  expect(h.outcome.reminder.sent).toBe(true);
  expect(h.outcome.prompt).toMatchObject({ ran: false, via: "agent/ask", status: 403 });
  expect(h.outcome.prompt.reason).toMatch(/scope/);
});

test("a prompt runs with the event maker's scopes: the mail the firing holds for the reminder is not lent to the agent", async () => {
  sent.length = 0;
  const noMail = await inst.token("cara", { scopes: ["events", "agent"] });
  clock.set("2026-08-02T08:00:00Z");
  const ev = (await inst.call("events/create", { title: "Ask", when: "2026-08-02T09:00:00Z", prompt: "Which scopes?" }, noMail)).body.result;
  clock.set("2026-08-02T09:00:00Z");
  await schedulerOf(inst.rt).runDue();
  const [h] = await historyOf(ev.id, noMail);
  expect(h.outcome.reminder.sent).toBe(true);
  expect(h.outcome.prompt).toMatchObject({ ran: true });
  expect(JSON.parse(h.outcome.prompt.answer).sort()).toEqual(["agent", "events"]);

  const all = await inst.token("cara");
  clock.set("2026-08-02T09:30:00Z");
  const full = (await inst.call("events/create", { title: "Ask again", when: "2026-08-02T10:00:00Z", prompt: "Which scopes?" }, all)).body.result;
  clock.set("2026-08-02T10:00:00Z");
  await schedulerOf(inst.rt).runDue();
  expect(JSON.parse((await historyOf(full.id, all))[0].outcome.prompt.answer)).toBe("*");
});

test("a prompt still running does not hold up the next reminder", async () => {
  clock.set("2026-08-03T06:00:00Z");
  const slow = (await inst.call("events/create", { title: "Think", when: "2026-08-03T07:00:00Z", prompt: "Take your time" }, alice)).body.result.id;
  const quick = (await inst.call("events/create", { title: "Go", when: "2026-08-03T07:00:01Z" }, alice)).body.result.id;
  const status = async (id: string) => (await sqlAll<{ status: string }>(inst.rt, "SELECT status FROM schedule_firings WHERE ref = ?", id));
  let open!: () => void;
  gate.closed = new Promise((r) => (open = r));
  try {
    // The first run claims at 07:00:00 whenever it gets to its claim; the clock has moved on by then.
    const first = schedulerOf(inst.rt).runDue(new Date("2026-08-03T07:00:00Z"));
    clock.set("2026-08-03T07:00:01Z");
    await schedulerOf(inst.rt).runDue();
    expect(await status(quick)).toEqual([{ status: "done" }]);
    expect(await status(slow)).toEqual([{ status: "claimed" }]);
    open();
    await first;
    expect(await status(slow)).toEqual([{ status: "done" }]);
  } finally {
    gate.closed = null;
    open();
  }
});

test("a prompt caught up on at start runs in the background, so the instance starts without waiting for it", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-events-start-"));
  const clock2 = new TestClock(Date.parse("2026-08-04T06:00:00Z"));
  const plugins = [pluginPaths.events, pluginPaths.mail, pluginPaths.agent];
  let open!: () => void;
  try {
    const a = await startInstance({ plugins, clock: clock2, dataDir });
    const token = await a.token("alice");
    const id = (await a.call("events/create", { title: "Digest", when: "2026-08-04T07:00:00Z", prompt: "Summarise" }, token)).body.result.id;
    await a.stop();
    gate.closed = new Promise((r) => (open = r));
    clock2.set("2026-08-04T07:05:00Z");
    const b = await startInstance({ plugins, clock: clock2, dataDir });
    const status = async () => (await sqlAll<{ status: string }>(b.rt, "SELECT status FROM schedule_firings WHERE ref = ?", id));
    expect(await status()).toEqual([{ status: "claimed" }]);
    open();
    await schedulerOf(b.rt).settle();
    expect(await status()).toEqual([{ status: "done" }]);
    await b.stop();
  } finally {
    gate.closed = null;
    open?.();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
