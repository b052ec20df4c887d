// A note's add is the write the benchmark holds against PostgreSQL's own
// limit, and a get the read: the statements each sends are counted, so work
// neither needs (a second read of the row, a lookup not kept, the audit entry
// or the change notice sent in a transaction of its own, a SAVEPOINT) cannot
// come back unseen. An add is its upsert and its audit entry, committed
// together or not at all: on SQLite between BEGIN and COMMIT, on PostgreSQL
// as one statement (core/db/store.ts Lastly); its live notice is
// published once it has committed, on PostgreSQL from a connection of the
// shared state's own (core/shared/pg.ts), a few writes' notices at a time.
import "../statements.ts";
import { afterEach, expect, test } from "bun:test";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { ownStatements, statementLog } from "../statements.ts";

let h: Hearth | null = null;
afterEach(async () => {
  await h?.stop();
  h = null;
});

/** Each statement by what it is, so a failure shows which one came or went. */
const kinds = (statements: string[]) =>
  statements.map((q) => {
    if (/^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i.test(q)) return q.split(" ")[0].toUpperCase();
    if (/^WITH w AS \(insert into "notes"[^]*, c0 AS \(INSERT INTO audit_log[^]*\) SELECT \* FROM w$/i.test(q)) return "upsert note and audit entry";
    if (/^insert into "notes"/i.test(q)) return "upsert note";
    if (/^select .* from "notes"/i.test(q)) return "read note";
    if (/^INSERT INTO audit_log/i.test(q)) return "audit entry";
    if (/pg_notify/i.test(q)) return "notice";
    return q;
  });

test("an add is its upsert and its audit entry in one transaction (on PostgreSQL one statement); a get is one statement", async () => {
  h = await startHearth({ clock: new TestClock() });
  const token = await h.token("alice");
  const add = (text: string) => h!.call("notes/add", { title: "shopping", text }, { token });
  // The first calls look the token up and record its use; what is counted is a call like every one after them.
  expect((await add("milk")).status).toBe(200);
  expect((await h.call("notes/get", { title: "shopping" }, { token })).status).toBe(200);
  await h.rt.audit!.flush();
  const log = statementLog(h.rt.store);
  let added: string[];
  let got: string[];
  try {
    log.start();
    const a = await add("milk, eggs");
    added = ownStatements(log.stop());
    expect(a.status).toBe(200);
    log.start();
    const g = await h.call("notes/get", { title: "shopping" }, { token });
    got = ownStatements(log.stop());
    expect(g.body.result.text).toBe("milk, eggs");
  } finally {
    log.restore();
  }
  const write = h.rt.store.kind === "sqlite" ? ["BEGIN", "upsert note", "audit entry", "COMMIT"] : ["upsert note and audit entry"];
  expect({ add: kinds(added), get: kinds(got) }).toEqual({ add: write, get: ["read note"] });
  // The entry committed with the write: the log holds it, as the person's own.
  const entries = await h.rows<{ args: string; outcome: string }>("SELECT args, outcome FROM audit_entries WHERE method = 'add' ORDER BY id");
  expect(entries.map((e) => [JSON.parse(e.args).text, e.outcome])).toEqual([
    ["milk", "ok"],
    ["milk, eggs", "ok"],
  ]);
});
