// tasks/list over many tasks in every state: the order the spec promises (open
// first), each row as create and update answer it, and the order read from an
// index rather than sorted per call.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { listQuery } from "../../plugins/tasks/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

let h: Hearth;
let alice: string;
const clock = new TestClock();
// The latest answer create or update gave for each task: what the list must show.
const latest = new Map<string, Record<string, unknown>>();

beforeAll(async () => {
  h = await startHearth({ clock });
  alice = await h.token("alice");
  await h.token("bob").then((bob) => h.call("tasks/create", { title: "bob's" }, { token: bob }));
  const dues = [undefined, "2027-03-01 09:00", "2026-12-24T18:00:00+01:00", undefined, "2027-03-01 09:00", "2026-04-01 08:15"];
  for (let i = 0; i < 30; i++) {
    clock.advance(1000);
    const due = dues[i % dues.length];
    const r = await h.call("tasks/create", { title: `task ${i}`, ...(due ? { due } : {}), ...(i % 4 === 0 ? { assignee: "agent" } : {}) }, { token: alice });
    expect(r.status).toBe(200);
    latest.set(r.body.result.id, r.body.result);
  }
  const ids = [...latest.keys()];
  for (const [n, id] of ids.entries()) {
    if (n % 3 === 0) continue;
    clock.advance(777);
    const r = await h.call("tasks/update", { id, status: n % 3 === 1 ? "done" : "doing", result: `r${n}` }, { token: alice });
    expect(r.status).toBe(200);
    latest.set(id, r.body.result);
  }
});
afterAll(() => h.stop());

type Task = { id: string; status: string; due: string | null; done: string | null; created: string };
const ms = (iso: string | null) => (iso === null ? null : Date.parse(iso));

/** The spec's order, worked out from the answers themselves: open first by earliest due (none last), then done by latest finished; ties by oldest. */
function expectedOrder(tasks: Task[]): string[] {
  const key = (t: Task) => (t.status === "done" ? [1, -ms(t.done)!] : [0, ms(t.due) ?? Number.MAX_SAFE_INTEGER]);
  return [...tasks]
    .sort((a, b) => {
      const [ka, kb] = [key(a), key(b)];
      return ka[0] - kb[0] || ka[1] - kb[1] || ms(a.created)! - ms(b.created)!;
    })
    .map((t) => t.id);
}

test("the list is every task of the caller, open first, each row as create and update answered it", async () => {
  const r = await h.call("tasks/list", {}, { token: alice });
  expect(r.status).toBe(200);
  const list: Task[] = r.body.result;
  expect(list.length).toBe(latest.size);
  for (const row of list) expect(row).toEqual(latest.get(row.id) as never);
  expect(list.map((t) => t.id)).toEqual(expectedOrder([...latest.values()] as Task[]));
  const firstDone = list.findIndex((t) => t.status === "done");
  expect(firstDone).toBeGreaterThan(0);
  expect(list.slice(firstDone).every((t) => t.status === "done")).toBe(true);
});

test("a status filter keeps the same order within that status", async () => {
  for (const status of ["todo", "doing", "done"]) {
    const r = await h.call("tasks/list", { status }, { token: alice });
    expect(r.status).toBe(200);
    const want = [...latest.values()].filter((t) => t.status === status) as Task[];
    expect(want.length).toBeGreaterThan(0);
    expect(r.body.result.map((t: Task) => t.id)).toEqual(expectedOrder(want));
  }
});

// SQLite's query planner: PostgreSQL's chooses by table statistics, and on a table this small it sorts.
test.skipIf(process.env.HEARTH_TEST_DB === "pg")("the list is read in order from an index, not sorted on every call (SQLite's plan; skipped on PostgreSQL)", () => {
  const list = listQuery(h.rt.store.rdb).toSQL();
  const plan = (h.rt.store.reader.query(`EXPLAIN QUERY PLAN ${list.sql}`).all(...list.params.map(() => "x")) as { detail: string }[]).map((p) => p.detail).join("\n");
  expect(plan).toContain("tasks_open_first");
  expect(plan).not.toContain("TEMP B-TREE");
});
