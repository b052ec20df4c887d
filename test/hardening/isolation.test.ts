// One account can never read, change or delete another's records, through any
// method. Walked over the registry: Alice creates through every account write
// method, with a marker in everything she writes; Bob then calls every
// account method, with Alice's ids, titles, slugs and names where a method
// takes them. Nothing Bob gets back carries Alice's marker, and Alice's own
// reads of her records are unchanged afterwards.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { buildRegistry, type MethodEntry } from "../../core/registry.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { minimalArgs } from "../mcp/args.ts";
import { garbageUpstream, hostileEnv, refuseOutside, type Garbage } from "./instance.ts";

const MARK = "zqxalice";
const KEYS = ["id", "slug", "title", "name", "handle", "room", "number"];
const registry = await buildRegistry({ pluginsDir: join(import.meta.dir, "..", "..", "plugins") });
const entries = registry.list();
const account = entries.filter((e) => e.def.access === "account");

let h: Hearth;
let upstream: Garbage;
let undo: () => void;
let alice: string;
let bob: string;

beforeAll(async () => {
  upstream = garbageUpstream();
  undo = refuseOutside();
  h = await startHearth({ env: { ...(await hostileEnv(upstream.url)), HEARTH_METERING: "off" }, clock: new TestClock() });
  alice = await h.token("alice");
  bob = await h.token("bob");
});
afterAll(async () => {
  await h?.stop();
  upstream?.stop();
  undo?.();
});

type S = Record<string, any>;

/** Arguments for Alice: the smallest valid ones, with her marker in every free-text field and anything private kept private. */
function aliceArgs(e: MethodEntry, n: number): Record<string, unknown> {
  const args = minimalArgs(e.def.args);
  const props = (e.def.args.properties ?? {}) as Record<string, S>;
  const required = new Set<string>(e.def.args.required ?? []);
  for (const [k, p] of Object.entries(props)) {
    // An optional handle names something existing (an edit); leaving it out creates.
    if (!required.has(k) && (KEYS.includes(k) || /id$|conversation/i.test(k))) continue;
    if (p.type === "string" && !p.pattern && !p.format && !p.anyOf && !("const" in p)) {
      const min = p.minLength ?? 0;
      const max = p.maxLength ?? 10_000;
      if (max < MARK.length + 4) continue;
      // Handles (titles, names) stay plain, since Bob will send them back; the marker goes in the content.
      let v = KEYS.includes(k) ? `alice ${k} ${n}` : `${MARK} ${k} ${n}`;
      if (v.length < min) v = `${v} ${"words of alice ".repeat(Math.ceil(min / 15))}`;
      args[k] = v.slice(0, max);
    }
    if (p.type === "boolean" && /private|secret/i.test(k)) args[k] = true;
    if (p.type === "boolean" && /public|share/i.test(k)) args[k] = false;
  }
  return args;
}

/** Well-formed values for arguments whose form a schema does not show (a date, an address). */
const HINTS: [RegExp, (n: number) => unknown][] = [
  [/email/i, (n) => `alice.${MARK}${n}@example.com`],
  [/^(when|due|start|end|from|until|at)$/i, () => "2026-03-02T10:00:00Z"],
  [/^(slug|name|handle)$/i, (n) => `alice-${n}`],
  [/^to$/i, () => "alice"],
  [/phone|number/i, () => "+15555550100"],
];

/** Calls as Alice, repairing what a refusal names (a hint, then the smallest value, then leaving it out) a few times. */
async function aliceCall(e: MethodEntry, args: Record<string, unknown>) {
  const props = (e.def.args.properties ?? {}) as Record<string, S>;
  const tried = new Map<string, number>();
  for (let attempt = 0; ; attempt++) {
    const r = await h.call(e.path, structuredClone(args), { token: alice, method: "POST" });
    const field = r.body?.error?.field as string | undefined;
    if (r.status !== 400 || !field || !(field in props) || attempt > 8) return r;
    const step = tried.get(field) ?? 0;
    tried.set(field, step + 1);
    const hint = HINTS.find(([re]) => re.test(field));
    if (step === 0 && hint) args[field] = hint[1](attempt);
    else if (step <= 1) args[field] = minimalArgs({ ...e.def.args, required: [field] } as never)[field];
    else if (!(e.def.args.required ?? []).includes(field)) delete args[field];
    else return r;
  }
}

/** Values under id-like keys anywhere in an answer. */
function handles(v: unknown, out: Map<string, Set<string>>, depth = 0) {
  if (depth > 4 || v === null || typeof v !== "object") return;
  for (const [k, x] of Object.entries(v as S)) {
    if (KEYS.includes(k) && (typeof x === "string" || typeof x === "number")) {
      if (!out.has(k)) out.set(k, new Set());
      out.get(k)!.add(String(x));
    } else handles(x, out, depth + 1);
  }
}

test("no method lets one account read, change or delete another's records", async () => {
  // Alice writes through every account write method that creates or changes (never a delete).
  const owned = new Map<string, Map<string, Set<string>>>();
  let made = 0;
  // Twice: the second round can edit, fork or reply to what the first made.
  // (destructive also marks writes that overwrite in place, such as notes/add: those create and are kept; deletes are left out.)
  const writes = account.filter((x) => x.def.kind === "write" && !(x.def.destructive && x.name === "delete"));
  for (const [n, e] of [...writes, ...writes].entries()) {
    const args = aliceArgs(e, n);
    const mine = owned.get(e.service);
    for (const k of Object.keys(args)) if (mine?.has(k) && n >= writes.length) args[k] = [...mine.get(k)!][0];
    const r = await aliceCall(e, args);
    expect(r.status, `${e.path} as alice`).not.toBe(500);
    if (process.env.ISOLATION_DEBUG) console.log(e.path, r.status, JSON.stringify(r.body).slice(0, 200));
    if (r.status !== 200) continue;
    made++;
    const m = owned.get(e.service) ?? new Map<string, Set<string>>();
    handles(r.body.result, m);
    owned.set(e.service, m);
  }
  expect(made).toBeGreaterThan(5);

  // What Alice sees of her records, through every account read that takes one of their handles.
  const probes: { e: MethodEntry; args: Record<string, unknown> }[] = [];
  for (const e of account) {
    const props = Object.keys(e.def.args.properties ?? {});
    const mine = owned.get(e.service);
    if (!mine) continue;
    for (const key of props.filter((p) => mine.has(p)))
      for (const value of mine.get(key)!) {
        const args = minimalArgs(e.def.args);
        const schema = (e.def.args.properties as S)[key];
        args[key] = schema.type === "integer" || schema.type === "number" ? Number(value) : value;
        probes.push({ e, args });
      }
  }
  const reads = probes.filter((p) => p.e.def.kind === "read");
  const seen = async () => Promise.all(reads.map(async (p) => JSON.stringify((await h.call(p.e.path, p.args, { token: alice, method: "POST" })).body)));
  const before = await seen();
  // The check below could fail: Alice's own reads do carry her marker.
  expect(before.filter((b) => b.includes(MARK)).length).toBeGreaterThan(4);

  // Bob tries everything with Alice's handles, then every account method plainly.
  const leaks: string[] = [];
  const attempts = [...probes, ...account.map((e) => ({ e, args: minimalArgs(e.def.args) }))];
  for (const { e, args } of attempts) {
    const r = await h.call(e.path, structuredClone(args), { token: bob, method: "POST" });
    // What Bob sent comes back to him (his own note under the title he chose): only the rest can leak.
    let text = JSON.stringify(r.body);
    for (const v of Object.values(args)) if (typeof v === "string" && v.length > 2) text = text.split(JSON.stringify(v).slice(1, -1)).join("<his>");
    if (r.status === 500) leaks.push(`${e.path} ${JSON.stringify(args)} as bob: 500 ${text.slice(0, 200)}`);
    // Apps are published to everyone, and forking one is the point of them.
    if (text.includes(MARK) && e.path !== "apps/fork") leaks.push(`${e.path} ${JSON.stringify(args)} as bob got alice's data: ${text.slice(0, 300)}`);
  }
  expect(leaks).toEqual([]);
  expect(attempts.length).toBeGreaterThan(account.length);

  // Alice's records read exactly as before Bob's attempts.
  const after = await seen();
  const changed = reads.filter((_, i) => before[i] !== after[i]).map((p, i) => `${p.e.path} ${JSON.stringify(p.args)}: ${before[i].slice(0, 200)} -> ${after[i].slice(0, 200)}`);
  expect(changed).toEqual([]);
});
