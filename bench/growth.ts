// Cost as a person's data grows: every account method of the services that
// keep records per account, timed through HTTP (token, dispatch, validation,
// the store) for one account holding GROWTH records per service (default
// 100,000) and, call by call in turn with it, its twin holding 1,000, beside
// 10 other accounts holding GROWTH/10 each.
// The records are made in bulk in the store (each service's first record
// through its own method, then copied in SQL with its keys varied), since
// making 100,000 of each through HTTP would take the run's hour; the calls
// timed are the real ones.
//
// Targets: a per-item method (get, read, update, delete, add) costs within
// 1.5x at GROWTH what it costs at 1,000; a list or search costs what it
// returns, so with the same answer (a page, a limit, a match) it too stays
// within 1.5x. `bun bench/growth.ts` (GROWTH=10000 for a quick look);
// benchGrowth() returns the rows.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureAccount, issueToken } from "../core/auth/tokens.ts";
import { listen } from "../core/http/serve.ts";
import { createRuntime } from "../core/instance.ts";

export interface GrowthRow {
  method: string;
  /** What the call is: "item" (get, update, delete, add), "list" or "search". */
  kind: "item" | "list" | "search";
  /** The arguments, as shown. */
  args: string;
  small: number;
  large: number;
  ratio: number;
  /** CPU time of this process (the server and its client) per call, p50 in ms: steadier than the time taken on a busy machine. */
  cpuSmall: number;
  cpuLarge: number;
  cpuRatio: number;
  pass: boolean;
}
export interface GrowthBench {
  records: number;
  small: number;
  others: number;
  calls: number;
  seedSec: number;
  rows: GrowthRow[];
}

const TARGET = 1.5;
const SMALL = 1000;
const HOUR = 3_600_000;

/** One table's records copied from a template row: the columns set per copy, as SQL over `i` (the copy's number) and the template's own columns. */
interface Copy {
  table: string;
  /** Picks the caller's template row(s): SQL over the table's columns, given the owner's id as ?1. */
  where: string;
  vary: Record<string, string>;
}

// Copies keep their template's id but for its last six characters (the copy's
// number), so an id stays the length and alphabet of one the service made.
const id = "substr(id, 1, length(id) - 6) || printf('%06d', i)";
const COPIES: Copy[] = [
  { table: "notes", where: "owner = ?1", vary: { title: "title || printf(' %06d', i)", created: "created - i * 1000", updated: "updated - i * 1000" } },
  {
    table: "contacts",
    where: "owner = ?1",
    vary: { id, name: "name || printf(' %06d', i)", name_key: "name_key || printf(' %06d', i)", email: "printf('p%06d.', i) || email", phone_digits: "printf('%06d', i) || phone_digits" },
  },
  { table: "files_files", where: "owner = ?1", vary: { id, name: "printf('%06d-', i) || name", created: "created - i * 1000", share: "NULL" } },
  // Most of a person's tasks are done, as after years of use.
  {
    table: "tasks",
    where: "owner = ?1",
    vary: {
      id,
      title: "title || printf(' %06d', i)",
      status: "CASE WHEN i % 10 < 8 THEN 'done' ELSE status END",
      done: "CASE WHEN i % 10 < 8 THEN created - i * 1000 ELSE NULL END",
      created: "created - i * 1000",
      due: "CASE WHEN i % 10 = 9 THEN due + i * 60000 ELSE due END",
    },
  },
  // Events an hour apart going back from the template: all but the first few in the past, as a calendar's history.
  { table: "events_events", where: "owner = ?1", vary: { id, title: "title || printf(' %06d', i)", start: "start - i * 3600000", created: "created - i * 1000" } },
  { table: "docs_documents", where: "owner = ?1", vary: { id, title: "title || printf(' %06d', i)", updated: "updated - i * 1000", created: "created - i * 1000" } },
  { table: "blog_posts", where: "author = ?1", vary: { id, title: "title || printf(' %06d', i)", created: "created - i * 1000", updated: "updated - i * 1000" } },
  // The shared full-text index, for the documents and posts copied above: each copy found by its own title.
  { table: "search_index", where: "owner = ?1", vary: { ref: "substr(ref, 1, length(ref) - 6) || printf('%06d', i)", title: "title || printf(' %06d', i)" } },
];

interface Timed {
  method: string;
  kind: GrowthRow["kind"];
  args: (k: number, phase: Phase) => Record<string, unknown>;
}
interface Phase {
  /** Records the account holds now. */
  n: number;
  /** A tag unique to the phase, for what its writes make. */
  tag: string;
  /** Template ids: the service's first record, its copies named from it. */
  t: Record<string, string>;
}
const copyId = (template: string, i: number) => template.slice(0, -6) + String(i).padStart(6, "0");
// A record from the middle of the account's records, and for deletes a
// different one per call, from the middle too, so both phases delete records
// of the same age.
const mid = (p: Phase) => Math.floor(p.n / 2);
const pad = (i: number) => String(i).padStart(6, "0");

const METHODS: Timed[] = [
  { method: "notes/add", kind: "item", args: (k, p) => ({ title: `new ${p.tag} ${k}`, text: "written while timed" }) },
  { method: "notes/get", kind: "item", args: (_k, p) => ({ title: `template ${pad(mid(p))}` }) },
  { method: "notes/delete", kind: "item", args: (k, p) => ({ title: `template ${pad(mid(p) + 1 + k)}` }) },
  { method: "notes/list", kind: "list", args: () => ({ limit: 50 }) },
  { method: "contacts/add", kind: "item", args: (k, p) => ({ name: `New ${p.tag} ${k}`, email: `new${k}@example.com` }) },
  { method: "contacts/delete", kind: "item", args: (k, p) => ({ id: copyId(p.t.contact, mid(p) + 1 + k) }) },
  { method: "contacts/find", kind: "search", args: (_k, p) => ({ query: `ada ${pad(mid(p))}` }) },
  { method: "contacts/list", kind: "list", args: () => ({ limit: 50 }) },
  { method: "files/put", kind: "item", args: (k, p) => ({ name: `new-${p.tag}-${k}.txt`, content: "written while timed" }) },
  { method: "files/get", kind: "item", args: (_k, p) => ({ id: copyId(p.t.file, mid(p)) }) },
  { method: "files/delete", kind: "item", args: (k, p) => ({ id: copyId(p.t.file, mid(p) + 1 + k) }) },
  { method: "files/list", kind: "list", args: () => ({ limit: 50 }) },
  { method: "tasks/create", kind: "item", args: (k, p) => ({ title: `new ${p.tag} ${k}`, due: "2027-01-01 09:00" }) },
  { method: "tasks/update", kind: "item", args: (k, p) => ({ id: copyId(p.t.task, mid(p)), result: `r${k}` }) },
  { method: "tasks/delete", kind: "item", args: (k, p) => ({ id: copyId(p.t.task, mid(p) + 1 + k) }) },
  { method: "tasks/list", kind: "list", args: () => ({ limit: 50 }) },
  { method: "tasks/list", kind: "list", args: () => ({ status: "doing", limit: 50 }) },
  { method: "tasks/next", kind: "item", args: () => ({}) },
  { method: "events/create", kind: "item", args: (k) => ({ title: `new ${k}`, when: "2030-01-01T09:00:00+00:00" }) },
  { method: "events/delete", kind: "item", args: (k, p) => ({ id: copyId(p.t.event, mid(p) + 1 + k) }) },
  { method: "events/list", kind: "list", args: () => ({}) },
  { method: "events/free", kind: "list", args: () => ({}) },
  { method: "docs/write", kind: "item", args: (k, p) => ({ title: `new ${p.tag} ${k}`, content: "written while timed" }) },
  { method: "docs/read", kind: "item", args: (_k, p) => ({ id: copyId(p.t.doc, mid(p)) }) },
  { method: "docs/read", kind: "item", args: (_k, p) => ({ title: `template ${pad(mid(p))}` }) },
  { method: "docs/delete", kind: "item", args: (k, p) => ({ id: copyId(p.t.doc, mid(p) + 1 + k) }) },
  { method: "docs/list", kind: "list", args: () => ({ limit: 50 }) },
  { method: "docs/list", kind: "search", args: (_k, p) => ({ query: `template ${pad(mid(p))}` }) },
  { method: "blog/create", kind: "item", args: (k, p) => ({ title: `new ${p.tag} ${k}`, content: "A post written while the benchmark timed its calls, long enough." }) },
  { method: "blog/read", kind: "item", args: (_k, p) => ({ id: copyId(p.t.post, mid(p)) }) },
  { method: "blog/update", kind: "item", args: (k, p) => ({ id: copyId(p.t.post, mid(p)), tags: `t${k}` }) },
  { method: "blog/delete", kind: "item", args: (k, p) => ({ id: copyId(p.t.post, mid(p) + 1 + k) }) },
  { method: "blog/list", kind: "list", args: () => ({ limit: 50 }) },
];

export async function benchGrowth(o: { records?: number; calls?: number; only?: string[] } = {}): Promise<GrowthBench> {
  const large = o.records ?? Number(process.env.GROWTH ?? 100_000);
  // GROWTH_ONLY=contacts/find,docs/list times those methods alone (the records are made all the same).
  const only = o.only ?? (process.env.GROWTH_ONLY ? process.env.GROWTH_ONLY.split(",") : null);
  const methods = only ? METHODS.filter((m) => only.includes(m.method)) : METHODS;
  const calls = o.calls ?? Number(process.env.GROWTH_CALLS ?? 60);
  if (!(large > SMALL)) throw new Error(`GROWTH must be more than ${SMALL}`);
  // Deletes take a record each from the middle of the twin's 1,000, warm-ups included.
  if (!(calls >= 5 && calls <= 400)) throw new Error("GROWTH_CALLS must be 5-400");
  const dir = mkdtempSync(join(tmpdir(), "hearth-bench-growth-"));
  // No limits or meter: the run times the calls, not the limiter refusing them.
  const rt = await createRuntime({
    env: { HEARTH_DATA: dir, HEARTH_LOG: "off", HEARTH_METERING: "off", HEARTH_COLLECTORS: "off", AGENT_WORKER: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0", HEARTH_RATE_PRICED: "0" },
  });
  await rt.start();
  const app = listen(rt, { port: 0, hostname: "127.0.0.1" });
  try {
    const call = async (path: string, args: Record<string, unknown>, token: string) => {
      const kind = rt.registry.methods.get(path)?.def.kind;
      const q = new URLSearchParams(Object.entries(args).map(([k, v]) => [k, String(v)]));
      const res =
        kind === "read"
          ? await fetch(`${app.url}/api/v1/${path}?${q}`, { headers: { authorization: `Bearer ${token}` } })
          : await fetch(`${app.url}/api/v1/${path}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(args) });
      const body = (await res.json()) as { result?: any; error?: { message: string } };
      if (res.status !== 200) throw new Error(`${path} ${JSON.stringify(args)}: ${res.status} ${body.error?.message}`);
      return body.result;
    };

    // The person at GROWTH, the same person's twin at 1,000 (timed in turn with
    // it, call by call, so the machine's load falls on both alike), and ten
    // neighbours; each with one record of every kind made through its method:
    // the templates.
    const people = ["grower", "twin", ...Array.from({ length: 10 }, (_, i) => `neighbour${i}`)];
    const accounts: { id: string; token: string; t: Record<string, string> }[] = [];
    const soon = new Date(rt.clock.now().getTime() + 6 * HOUR).toISOString().replace(/\.\d+Z$/, "+00:00");
    for (const name of people) {
      const account = await ensureAccount(rt.store, name);
      const token = (await issueToken(rt.store, account)).token;
      await call("notes/add", { title: "template", text: "A note of a few words, as most are." }, token);
      const contact = (await call("contacts/add", { name: "Ada", email: "ada@example.com", phone: "+44 20 7946 0958" }, token)).id;
      const file = (await call("files/put", { name: "template.txt", content: "A small file." }, token)).id;
      const task = (await call("tasks/create", { title: "template", due: "2027-01-01 09:00" }, token)).id;
      const event = (await call("events/create", { title: "template", when: soon }, token)).id;
      const doc = (await call("docs/write", { title: "template", content: "A document of a few words." }, token)).id;
      const post = (await call("blog/create", { title: "template", content: "A post of a few words, at least fifty characters long in all.", private: true }, token)).id;
      accounts.push({ id: account.id, token, t: { contact, file, task, event, doc, post } });
    }
    const [me, twin, ...others] = accounts;

    // Copies numbered from..to-1 of each template of the account.
    const seed = (owner: string, from: number, to: number) =>
      rt.store.exclusive(() => {
        const db = rt.store.writer;
        db.run("BEGIN");
        db.run("DROP TABLE IF EXISTS temp.grow_seq");
        db.run("CREATE TEMP TABLE grow_seq (i INTEGER PRIMARY KEY)");
        db.run(`WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?2) INSERT INTO grow_seq SELECT i FROM n`, [from, to]);
        for (const c of COPIES) {
          const cols = (db.query(`SELECT name FROM pragma_table_info('${c.table}')`).all() as { name: string }[]).map((r) => r.name);
          const exprs = cols.map((col) => (col in c.vary ? `${c.vary[col]}` : `"${col}"`));
          db.run(`INSERT INTO "${c.table}" (${cols.map((x) => `"${x}"`).join(", ")}) SELECT ${exprs.join(", ")} FROM "${c.table}", grow_seq WHERE ${c.where.replaceAll("?1", `'${owner}'`)} AND ${templateOf(c.table)}`);
        }
        // The full-text index's lookup from a record to its entry, for the entries just made.
        db.run(`INSERT OR REPLACE INTO search_refs (service, kind, ref, id) SELECT service, kind, ref, rowid FROM search_index WHERE owner = ? AND title LIKE 'template %'`, [owner]);
        db.run("COMMIT");
      });

    const t0 = performance.now();
    for (const a of others) await seed(a.id, 1, large / 10);
    await seed(twin.id, 1, SMALL);
    await seed(me.id, 1, large);
    rt.store.writer.run("ANALYZE");
    const seedSec = (performance.now() - t0) / 1000;

    const small: Phase = { n: SMALL, tag: "s", t: twin.t };
    const big: Phase = { n: large, tag: "l", t: me.t };
    const p50 = (ms: number[]) => ms.sort((a, b) => a - b)[Math.floor(ms.length / 2)];
    const times: [number, number][] = [];
    const cpus: [number, number][] = [];
    for (const m of methods) {
      // Warm: the statement prepared and the pages it reads in the cache, as for a person using it.
      for (let k = 0; k < 3; k++) {
        await call(m.method, m.args(calls + 10 + k, { ...small, tag: "sw" }), twin.token);
        await call(m.method, m.args(calls + 10 + k, { ...big, tag: "lw" }), me.token);
      }
      const ms: [number[], number[]] = [[], []];
      const cpu: [number[], number[]] = [[], []];
      for (let k = 0; k < calls; k++) {
        // Which goes first alternates, so neither always follows the other's cache misses.
        const order = k % 2 ? ([1, 0] as const) : ([0, 1] as const);
        for (const which of order) {
          const [p, token] = which === 0 ? [small, twin.token] : [big, me.token];
          const args = m.args(k, p);
          const c = process.cpuUsage();
          const s = performance.now();
          await call(m.method, args, token);
          ms[which].push(performance.now() - s);
          const used = process.cpuUsage(c);
          cpu[which].push((used.user + used.system) / 1000);
        }
      }
      times.push([p50(ms[0]), p50(ms[1])]);
      cpus.push([p50(cpu[0]), p50(cpu[1])]);
    }

    const rows = methods.map((m, i) => {
      const [a, b] = times[i];
      const ratio = Math.round((b / a) * 100) / 100;
      const [ca, cb] = cpus[i];
      return {
        method: m.method,
        kind: m.kind,
        args: showArgs(m.args(0, big)),
        small: round(a),
        large: round(b),
        ratio,
        cpuSmall: round(ca),
        cpuLarge: round(cb),
        cpuRatio: Math.round((cb / Math.max(ca, 0.001)) * 100) / 100,
        pass: ratio <= TARGET,
      };
    });
    return { records: large, small: SMALL, others: others.length, calls, seedSec: Math.round(seedSec), rows };
  } finally {
    await app.stop();
    await rt.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The template rows of a table: the first record each account made, by the name it was given. */
function templateOf(table: string): string {
  switch (table) {
    case "contacts":
      return "name = 'Ada'";
    case "files_files":
      return "name = 'template.txt'";
    case "search_index":
      return "title = 'template' AND service IN ('docs', 'blog')";
    default:
      return "title = 'template'";
  }
}

const round = (n: number) => Math.round(n * 100) / 100;

function showArgs(a: Record<string, unknown>): string {
  const keys = Object.keys(a);
  return keys.length ? keys.map((k) => (k === "limit" || k === "status" ? `${k}=${a[k]}` : k)).join(", ") : "";
}

export function growthTable(r: GrowthBench): string {
  const head = ["method", "args", `${r.small.toLocaleString("en")} (ms)`, `${r.records.toLocaleString("en")} (ms)`, "ratio", "cpu (ms)", "cpu ratio", "target", ""];
  const lines = r.rows.map((x) => [
    x.method,
    x.args,
    x.small.toFixed(2),
    x.large.toFixed(2),
    `${x.ratio.toFixed(2)}x`,
    `${x.cpuSmall.toFixed(2)} / ${x.cpuLarge.toFixed(2)}`,
    `${x.cpuRatio.toFixed(2)}x`,
    x.kind === "item" ? `<= ${TARGET}x` : `<= ${TARGET}x (same answer)`,
    x.pass ? "pass" : "FAIL",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (l: string[]) => l.map((c, i) => (i >= 2 && i <= 6 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ").trimEnd();
  return [fmt(head), fmt(widths.map((w) => "-".repeat(w))), ...lines.map(fmt)].join("\n");
}

export function growthSummary(r: GrowthBench): string {
  const failed = r.rows.filter((x) => !x.pass);
  return `p50 of ${r.calls} calls each over HTTP; one account at ${r.records.toLocaleString("en")} records per service, timed in turn with its twin at ${r.small.toLocaleString("en")}, ${r.others} others with ${(r.records / 10).toLocaleString("en")} each; made in ${r.seedSec} s. ${failed.length ? `Over target: ${failed.map((x) => `${x.method}(${x.args})`).join(", ")}` : "Every method within target."}`;
}

if (import.meta.main) {
  const r = await benchGrowth();
  console.log(`\nCost as one account grows:\n${growthTable(r)}\n${growthSummary(r)}`);
}
