// Reads that must cost what they answer, not what the account has gathered
// over the years: each read from an index in its order (SQLite's plan; on
// PostgreSQL the planner chooses by table statistics, and on tables this
// small it scans), and through HTTP on both stores, the answers those reads
// give as a calendar and a task list grow a past.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { stillOn } from "../../plugins/events/index.ts";
import { listQuery, nextQuery, statusQuery } from "../../plugins/tasks/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

let h: Hearth;
let alice: string;
const clock = new TestClock();
beforeAll(async () => {
  h = await startHearth({ clock });
  alice = await h.token("alice");
});
afterAll(() => h.stop());

// On a connection of its own, closed after: a plan asked on the instance's
// reader can leave it holding its snapshot, and later reads would not see new writes.
function plan(q: { toSQL(): { sql: string; params: unknown[] } }): string {
  const { sql, params } = q.toSQL();
  const db = new Database(h.rt.store.reader.filename, { readonly: true });
  try {
    return (db.query(`EXPLAIN QUERY PLAN ${sql}`).all(...(params.map(() => "x") as string[])) as { detail: string }[]).map((p) => p.detail).join("\n");
  } finally {
    db.close();
  }
}

const sqliteOnly = test.skipIf(process.env.HEARTH_TEST_DB === "pg");

sqliteOnly("tasks: the list, one status's list and the agent's next task are each read from an index in order (SQLite's plan)", () => {
  const db = h.rt.store.rdb;
  for (const [q, index] of [
    [listQuery(db), "tasks_open_first"],
    [statusQuery(db), "tasks_owner_status"],
    [nextQuery(db), "tasks_agent_next"],
  ] as const) {
    const p = plan(q);
    expect(p).toContain(`USING INDEX ${index}`);
    expect(p).not.toContain("TEMP B-TREE");
  }
});

sqliteOnly("events: the list and free slots read the repeating events and those still to end, each from its index, not the calendar's past (SQLite's plan)", () => {
  const [repeating, ending] = stillOn(h.rt.store.rdb, "someone", 0);
  expect(plan(repeating)).toContain("USING INDEX events_repeating");
  expect(plan(ending)).toContain("USING INDEX events_owner_end (owner=? AND <expr>>?)");
});

test("events/list and events/free still see a repeating event begun long ago and a long event still running, not the past ones", async () => {
  const at = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, "+00:00");
  const now = clock.now().getTime();
  const made = async (args: Record<string, unknown>) => {
    const r = await h.call("events/create", args, { token: alice });
    expect(r.status).toBe(200);
    return r.body.result.id as string;
  };
  // Ten past single events, a daily one begun a year ago, one running now (began 20 minutes ago, an hour long) and one tomorrow.
  for (let i = 1; i <= 10; i++) await made({ title: `past ${i}`, when: at(now - i * 86_400_000) });
  const daily = await made({ title: "daily", when: at(now - 365 * 86_400_000 + 3 * 3_600_000), repeat: "daily" });
  const running = await made({ title: "running", when: at(now - 20 * 60_000), minutes: 60 });
  const tomorrow = await made({ title: "tomorrow", when: at(now + 86_400_000) });
  const list = await h.call("events/list", {}, { token: alice });
  expect(list.status).toBe(200);
  expect(list.body.result.map((e: { id: string }) => e.id).sort()).toEqual([daily, running, tomorrow].sort());
  // The hour running now is not free, and neither is the daily one's hour.
  const free = await h.call("events/free", { from: at(now - 30 * 60_000), to: at(now + 2 * 86_400_000), day_start: 0, day_end: 24 }, { token: alice });
  expect(free.status).toBe(200);
  const slots = free.body.result.slots as { start: string; end: string }[];
  const isFree = (ms: number) => slots.some((s) => Date.parse(s.start) <= ms && ms < Date.parse(s.end));
  expect(isFree(now)).toBe(false);
  expect(isFree(now + 3 * 3_600_000 + 60_000)).toBe(false);
  expect(isFree(now + 86_400_000 + 60_000)).toBe(false);
  expect(isFree(now + 6 * 3_600_000)).toBe(true);
});
