import { afterAll, beforeAll, expect, test } from "bun:test";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

let h: Hearth;
let alice: string;
let bob: string;
const clock = new TestClock();
beforeAll(async () => {
  h = await startHearth({ clock });
  alice = await h.token("alice");
  bob = await h.token("bob");
});
afterAll(() => h.stop());

const create = async (args: Record<string, unknown>, token = alice) => {
  clock.advance(1000);
  return h.call("tasks/create", args, { token });
};

test("create applies defaults and accepts both due layouts", async () => {
  const a = await create({ title: "write report" });
  expect(a.status).toBe(200);
  expect(a.body.result).toMatchObject({ title: "write report", detail: "", assignee: "me", status: "todo", due: null, result: "" });
  expect(a.body.result.id).toBeString();
  const b = await create({ title: "call", due: "2026-05-01T17:00:00+01:00" });
  expect(b.body.result.due).toBe("2026-05-01T16:00:00.000Z");
  const c = await create({ title: "pay", due: "2026-05-02 09:30" });
  expect(c.body.result.due).toBe("2026-05-02T09:30:00.000Z");
});

test("a due in any other form is 400 naming due", async () => {
  for (const due of ["tomorrow", "2026-05-01", "2026-05-01T17:00:00", "2026-13-01 10:00", "2026-02-30 10:00", "2026-05-01 25:00"]) {
    const r = await create({ title: "x", due });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("due");
  }
  const bad = await create({ title: "x", assignee: "robot" });
  expect(bad.body.error.field).toBe("assignee");
  expect((await create({ title: "" })).body.error.field).toBe("title");
});

test("list puts open tasks first, filters by status, and update changes state and result", async () => {
  const list0 = (await h.call("tasks/list", {}, { token: alice })).body.result;
  const report = list0.find((t: { title: string }) => t.title === "write report");
  const u = await h.call("tasks/update", { id: report.id, status: "done", result: "sent" }, { token: alice });
  expect(u.body.result).toMatchObject({ status: "done", result: "sent", title: "write report" });
  expect(u.body.result.done).toBeString();
  const list = (await h.call("tasks/list", {}, { token: alice })).body.result;
  expect(list.map((t: { title: string }) => t.title)).toEqual(["call", "pay", "write report"]);
  const done = (await h.call("tasks/list", { status: "done" }, { token: alice })).body.result;
  expect(done.map((t: { title: string }) => t.title)).toEqual(["write report"]);
  const doing = await h.call("tasks/update", { id: list[1].id, status: "doing" }, { token: alice });
  expect(doing.body.result.status).toBe("doing");
  expect((await h.call("tasks/list", { status: "doing" }, { token: alice })).body.result.length).toBe(1);
  expect((await h.call("tasks/list", { status: "later" }, { token: alice })).body.error.field).toBe("status");
  expect((await h.call("tasks/update", { id: list[1].id, status: "nope" }, { token: alice })).status).toBe(400);
});

test("next is the open agent task due earliest, then the oldest", async () => {
  expect((await h.call("tasks/next", {}, { token: alice })).body.result).toBeNull();
  const old = await create({ title: "agent old", assignee: "agent" });
  await create({ title: "agent newer", assignee: "agent" });
  expect((await h.call("tasks/next", {}, { token: alice })).body.result.title).toBe("agent old");
  await create({ title: "agent due", assignee: "agent", due: "2030-01-01 00:00" });
  expect((await h.call("tasks/next", {}, { token: alice })).body.result.title).toBe("agent due");
  const due = (await h.call("tasks/next", {}, { token: alice })).body.result;
  await h.call("tasks/update", { id: due.id, status: "done" }, { token: alice });
  expect((await h.call("tasks/next", {}, { token: alice })).body.result.id).toBe(old.body.result.id);
});

test("another account's task is 404 for update and delete, and delete removes", async () => {
  const mine = (await create({ title: "private" })).body.result;
  expect((await h.call("tasks/update", { id: mine.id, title: "stolen" }, { token: bob })).status).toBe(404);
  expect((await h.call("tasks/delete", { id: mine.id }, { token: bob })).status).toBe(404);
  expect((await h.call("tasks/list", {}, { token: bob })).body.result).toEqual([]);
  expect((await h.call("tasks/delete", { id: mine.id }, { token: alice })).status).toBe(200);
  expect((await h.call("tasks/update", { id: mine.id, title: "x" }, { token: alice })).status).toBe(404);
});

test("update may move the due time, remove it and hand the task over; a bad one changes nothing", async () => {
  const t = (await create({ title: "plan trip", due: "2026-06-01 10:00", detail: "book" })).body.result;
  const moved = await h.call("tasks/update", { id: t.id, due: "2026-06-03T09:00:00+02:00", assignee: "agent" }, { token: alice });
  expect(moved.status).toBe(200);
  expect(moved.body.result).toMatchObject({ due: "2026-06-03T07:00:00.000Z", assignee: "agent", title: "plan trip", detail: "book" });
  // A bad due time (or assignee) is refused naming it, and the title sent with it is not written either.
  for (const [args, field] of [[{ due: "next week" }, "due"], [{ assignee: "bob" }, "assignee"]] as const) {
    const bad = await h.call("tasks/update", { id: t.id, title: "renamed", ...args }, { token: alice });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe(field);
  }
  const kept = (await h.call("tasks/list", {}, { token: alice })).body.result.find((x: { id: string }) => x.id === t.id);
  expect(kept).toMatchObject({ title: "plan trip", due: "2026-06-03T07:00:00.000Z", assignee: "agent" });
  const cleared = await h.call("tasks/update", { id: t.id, due: "", assignee: "me" }, { token: alice });
  expect(cleared.body.result).toMatchObject({ due: null, assignee: "me", title: "plan trip" });
  // Without them, update leaves both as they were, as the spec's callers expect.
  await h.call("tasks/update", { id: t.id, due: "2026-06-04 08:00" }, { token: alice });
  const same = await h.call("tasks/update", { id: t.id, status: "doing" }, { token: alice });
  expect(same.body.result).toMatchObject({ due: "2026-06-04T08:00:00.000Z", assignee: "me", status: "doing" });
});
