// A batch of entries is written with the values its rows share bound once
// (core/audit/log.ts): whatever mix of callers, methods and outcomes a
// batch holds, each entry keeps its own values, in the order of the calls.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { hashArgs, previewArgs } from "../../core/audit/preview.ts";
import { withHashes } from "./entries.ts";
import { newCall, type Call } from "../../core/call.ts";
import { dispatch } from "../../core/dispatch.ts";
import { HearthError } from "../../core/errors.ts";
import type { Caller } from "../../core/plugin.ts";
import { startHearth, type Hearth } from "../harness.ts";

let h: Hearth;
let alice: string;
let bob: string;

beforeAll(async () => {
  h = await startHearth({ env: { HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0", HEARTH_RATE_PRICED: "0" } });
  alice = await h.token("alice");
  bob = await h.token("bob");
});
afterAll(async () => {
  await h?.stop();
});

interface Entry {
  account: string | null;
  via: string;
  service: string;
  method: string;
  args: string;
  outcome: string;
  status: number;
}

test("every entry of a batch keeps its own values, whichever of them its neighbours share", async () => {
  await h.rt.audit!.flush();
  const before = Number((await h.row<{ n: number }>("SELECT count(*) AS n FROM audit_log"))!.n);
  const ids = Object.fromEntries((await h.rows<{ id: string; username: string }>("SELECT id, username FROM accounts")).map((a) => [a.username, a.id]));
  const want: Omit<Entry, "status">[] = [];
  // Runs of the same call (the columns of a statement all shared but the time and the call's id), then runs where one column changes at a time.
  for (let i = 0; i < 200; i++) {
    const who = i < 70 ? "alice" : i < 140 ? (i % 2 ? "alice" : "bob") : i % 7 === 0 ? null : "bob";
    const title = i < 70 ? "same" : `title ${i % 3}`;
    const r = await h.call("notes/get", { title }, who ? { token: who === "alice" ? alice : bob } : {});
    expect(r.status).toBe(who ? 404 : 401);
    want.push({ account: who ? ids[who] : null, via: who ? "token" : "none", service: "notes", method: "get", args: previewArgs({ title }), outcome: who ? "not_found" : "unauthenticated" });
  }
  await h.rt.audit!.flush();
  const got = await h.rows<Entry>(`SELECT account, via, service, method, args, outcome, status FROM audit_entries ORDER BY id LIMIT 1000 OFFSET ${before}`);
  expect(got.map(({ status: _, ...e }) => e)).toEqual(want);
  expect(got.map((e) => Number(e.status))).toEqual(want.map((w) => (w.account ? 404 : 401)));
});

test("full statements and the short last one of a batch keep each entry's own values, as the batch mixes callers, surfaces, methods, arguments and outcomes", async () => {
  await h.rt.audit!.flush();
  const before = Number((await h.row<{ n: number }>("SELECT count(*) AS n FROM audit_log"))!.n);
  const callers: Caller[] = [
    { account: { id: "acct-a", username: "a", admin: false } as Caller["account"], scopes: "*", via: "token", tokenId: "tok-a", tokenName: "laptop" },
    { account: { id: "acct-b", username: "b", admin: false } as Caller["account"], scopes: "*", via: "session" },
    { account: null, scopes: [], via: "none" },
  ];
  type Want = [string | null, string, string | null, string, string, string, string, string];
  const want: Want[] = [];
  // 200 entries held at once: three full statements of 62 (the first all alike, the second with callers taking turns, the third with one group
  // of columns changing in its last row only) and a last one of 14.
  for (let i = 0; i < 200; i++) {
    const caller = i < 62 ? callers[0] : i < 124 ? callers[i % 3] : i < 185 ? callers[0] : callers[1];
    const surface = i === 185 ? "mcp" : "http";
    const method = i >= 124 && i < 186 ? "list" : "get";
    const args = { title: i < 62 ? "same" : `t${i % 4}` };
    const error = i % 5 === 0 && i >= 62 ? new HearthError("not_found", "none") : undefined;
    h.rt.audit!.later({ call: newCall(caller, { id: `batch-${i}` }), surface, service: "notes", method, args, error, at: 1_800_000_000_000 + i });
    want.push([caller.account?.id ?? null, caller.via, caller.tokenId ?? null, surface, method, previewArgs(args), error ? "not_found" : "ok", `batch-${i}`]);
  }
  await h.rt.audit!.flush();
  const got = await h.rows<Record<string, unknown>>(`SELECT account, via, credential, surface, method, args, outcome, call_id, at AS ended FROM audit_entries ORDER BY id LIMIT 1000 OFFSET ${before}`);
  expect(got.map((r) => [r.account, r.via, r.credential, r.surface, r.method, r.args, r.outcome, r.call_id])).toEqual(want);
  expect(got.map((r) => Number(r.ended))).toEqual(want.map((_, i) => 1_800_000_000_000 + i));
});

test("a batch mixing plain arguments (hashed with the batch) and others (hashed as the call ends) gives each entry its own arguments' hash", async () => {
  await h.rt.audit!.flush();
  const before = Number((await h.row<{ n: number }>("SELECT count(*) AS n FROM audit_log"))!.n);
  const caller: Caller = { account: null, scopes: [], via: "none" };
  const kinds = [(i: number) => ({ title: `plain ${i}` }), (i: number) => ({ title: `unsorted ${i}`, text: "plain" }), (i: number) => ({ nested: { i } }), (i: number) => ({ password: `p${i}`, title: "t" }), (i: number) => ({ title: "x".repeat(81 + i) })];
  const sent = Array.from({ length: 130 }, (_, i) => kinds[i % kinds.length](i));
  sent.forEach((args, i) => h.rt.audit!.later({ call: newCall(caller, { id: `hash-${i}` }), surface: "http", service: "notes", method: "get", args, at: 1_800_000_000_000 + i }));
  await h.rt.audit!.flush();
  const got = withHashes(await h.rows<{ args: string; args_hash: string }>(`SELECT args, args_hash FROM audit_entries ORDER BY id LIMIT 1000 OFFSET ${before}`));
  expect(got).toEqual(sent.map((args) => ({ args: previewArgs(args), args_hash: hashArgs(args) })));
});

test("a call made from another says where it came in: a call dispatch made lends it nothing (nested), one a surface made for itself (a DAV request) its surface", async () => {
  const rt = h.rt;
  const log = rt.audit!;
  await log.flush();
  const before = Number((await h.row<{ n: number }>("SELECT count(*) AS n FROM audit_log"))!.n);
  const caller: Caller = { account: null, scopes: "*", via: "local" };
  const get = (title: string, o: { parent?: Call; surface?: string }) => dispatch(rt, { service: "notes", method: "get", args: { title }, caller, ...o }).catch(() => null);
  // The outermost call dispatch made, taken as its entry is handed to the log.
  let outer: Call | undefined;
  const later = log.later.bind(log);
  log.later = (e) => {
    outer ??= e.call;
    later(e);
  };
  try {
    await get("outer", { surface: "http" });
  } finally {
    log.later = later;
  }
  await get("from a dispatched call", { parent: outer! });
  await get("from a DAV request", { parent: newCall(caller, { id: "dav-request", surface: "dav" }) });
  await get("from a call of no surface", { parent: newCall(caller, { id: "plain" }) });
  await get("said by its surface", { parent: outer!, surface: "mcp" });
  await log.flush();
  const got = await h.rows<{ args: string; surface: string }>(`SELECT args, surface FROM audit_entries ORDER BY id LIMIT 1000 OFFSET ${before}`);
  expect(got.map((r) => [JSON.parse(r.args).title, r.surface])).toEqual([
    ["outer", "http"],
    ["from a dispatched call", "nested"],
    ["from a DAV request", "dav"],
    ["from a call of no surface", "nested"],
    ["said by its surface", "mcp"],
  ]);
});
