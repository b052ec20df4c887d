// The activity log through the real stack: every call on every surface
// (HTTP, MCP, DAV, the agent's tools) leaves exactly one entry, refused ones
// included; a write and its entry commit together or not at all; secrets are
// never kept; the owner reads, filters, pages and exports the log at
// /activity, and old entries go after HEARTH_AUDIT_DAYS.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { argsEntry, hashArgs, previewArgs } from "../../core/audit/preview.ts";
import { withHashes } from "./entries.ts";
import { isPg } from "../../core/db/store.ts";
import { get, signUp, type Signed } from "../auth/people.ts";
import { card3 } from "../dav/fixtures.ts";
import { startOpenAiFixture, type OpenAiFixture } from "../fixtures/openai/server.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { mcpClient } from "../mcp/client.ts";

let ai: OpenAiFixture;
let h: Hearth;
let alice: string;
let notesOnly: string;
let session: Signed;
const clock = new TestClock(new Date("2026-11-21T09:00:00Z").getTime());

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;

interface Row {
  id: number;
  at: number;
  call_id: string;
  account: string | null;
  via: string;
  credential: string | null;
  credential_name: string | null;
  surface: string;
  service: string;
  method: string;
  args: string;
  args_hash: string;
  credits: number;
  outcome: string;
  status: number;
  approved: string;
}

async function entries(): Promise<Row[]> {
  await h.rt.audit!.flush();
  return withHashes(await h.rows<Row>("SELECT * FROM audit_entries ORDER BY id"));
}

beforeAll(async () => {
  ai = await startOpenAiFixture();
  h = await startHearth({
    clock,
    env: { HEARTH_METER_ACCOUNTS: "all", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0", HEARTH_RATE_PRICED: "0", HEARTH_SIGNUP: "open", AI_BASE_URL: ai.base, AI_MODEL: "agent-model", AI_OLLAMA_URL: "", UPSTREAM_RETRY_MS: "0", AI_TIMEOUT_MS: "3000", AGENT_MAX_STEPS: "3", AGENT_WORKER_SECONDS: "3600" },
  });
  session = await signUp(h, "alice");
  alice = await h.token("alice");
  notesOnly = await h.token("alice", { scopes: ["notes"] });
  await h.grant("alice", 1000);
});
afterAll(async () => {
  await h?.stop();
  ai?.stop();
});

describe("one entry per call", () => {
  test("1,000 mixed calls over HTTP, MCP, DAV and the agent, refused ones included, leave exactly one entry each", async () => {
    const expected = new Map<string, { surface: string; path: string; outcome: string; status: number }>();
    // Keyed by method and a string only that call sent, so each call is found whatever else it wrote.
    const want = (marker: string, surface: string, path: string, outcome: string, status: number) => expected.set(`${path} ${marker}`, { surface, path, outcome, status });
    const pending: Promise<unknown>[] = [];
    const batch = async () => {
      await Promise.all(pending.splice(0));
    };

    // HTTP: 600 calls, 300 of them refused (401 without a token, 403 out of scope, 400 on a bad argument).
    for (let i = 0; i < 120; i++) {
      const kinds: [string, () => Promise<unknown>, string, string, number][] = [
        [`h-add-${i}`, () => h.call("notes/add", { title: `h-add-${i}`, text: "x" }, { token: alice }), "notes/add", "ok", 200],
        [`h-get-${i}`, () => h.call("notes/get", { title: `h-get-${i}` }, { token: alice }), "notes/get", "not_found", 404],
        [`h-401-${i}`, () => h.call("notes/list", { query: `h-401-${i}` }), "notes/list", "unauthenticated", 401],
        [`h-403-${i}`, () => h.call("tasks/create", { title: `h-403-${i}` }, { token: notesOnly }), "tasks/create", "forbidden", 403],
        [`h-400-${i}`, () => h.call("notes/add", { title: "", text: `h-400-${i}` }, { token: alice }), "notes/add", "invalid_argument", 400],
      ];
      for (const [marker, run, path, outcome, status] of kinds) {
        want(marker, "http", path, outcome, status);
        pending.push(run());
      }
      if (i % 10 === 9) await batch();
    }
    await batch();

    // MCP: 250 tool calls through the SDK client, 100 refused.
    const mcp = await mcpClient(h.url, { token: alice });
    const scoped = await mcpClient(h.url, { token: notesOnly });
    for (let i = 0; i < 50; i++) {
      want(`m-add-${i}`, "mcp", "notes/add", "ok", 200);
      pending.push(mcp.call("notes_add", { title: `m-add-${i}`, text: "y" }));
      want(`m-add2-${i}`, "mcp", "notes/add", "ok", 200);
      pending.push(mcp.call("notes_add", { title: `m-add2-${i}`, text: "y" }));
      want(`h-add-${i}`, "mcp", "notes/get", "ok", 200);
      pending.push(mcp.call("notes_get", { title: `h-add-${i}` }));
      // A token's MCP session lists only the tools in its scope (a call of another is refused before it is one), so its refusals here are of arguments.
      want(`m-404-${i}`, "mcp", "notes/get", "not_found", 404);
      pending.push(scoped.call("notes_get", { title: `m-404-${i}` }));
      want(`m-400-${i}`, "mcp", "notes/add", "invalid_argument", 400);
      pending.push(mcp.call("notes_add", { title: "", text: `m-400-${i}` }));
      if (i % 5 === 4) await batch();
    }
    await batch();
    await mcp.close();
    await scoped.close();

    // DAV: 100 cards put by a sync client, each one contacts/add made from the request.
    for (let i = 0; i < 100; i++) {
      want(`d-${i}`, "dav", "contacts/add", "ok", 200);
      pending.push(
        fetch(`${h.url}/dav/addressbooks/alice/contacts/d-${i}.vcf`, {
          method: "PUT",
          body: card3(`uid-${i}`, `d-${i}`),
          headers: { authorization: basic("alice", alice), "content-type": "text/vcard", "if-none-match": "*" },
        }).then((r) => expect(r.status).toBe(201)),
      );
      if (i % 10 === 9) await batch();
    }
    await batch();

    // The agent: 25 asks over HTTP, each making one tool call of its own (50 calls).
    for (let i = 0; i < 25; i++) {
      ai.reply({ calls: [{ name: "notes_add", arguments: JSON.stringify({ title: `a-tool-${i}`, text: "z" }) }] }, { say: "done" });
      want(`a-ask-${i}`, "http", "agent/ask", "ok", 200);
      want(`a-tool-${i}`, "agent", "notes/add", "ok", 200);
      const r = await h.call("agent/ask", { prompt: `a-ask-${i}` }, { token: alice });
      expect(r.status).toBe(200);
    }
    expect(expected.size).toBe(1000);

    const rows = await entries();
    const found = new Map<string, Row[]>();
    for (const r of rows) {
      for (const v of Object.values(JSON.parse(r.args) as Record<string, unknown>)) {
        const key = `${r.service}/${r.method} ${v}`;
        if (typeof v === "string" && expected.has(key)) found.set(key, [...(found.get(key) ?? []), r]);
      }
    }
    const wrong: string[] = [];
    for (const [marker, w] of expected) {
      const got = found.get(marker) ?? [];
      if (got.length !== 1) {
        wrong.push(`${marker}: ${got.length} entries`);
        continue;
      }
      const [e] = got;
      const seen = { surface: e.surface, path: `${e.service}/${e.method}`, outcome: e.outcome, status: Number(e.status) };
      if (JSON.stringify(seen) !== JSON.stringify(w)) wrong.push(`${marker}: ${JSON.stringify(seen)} not ${JSON.stringify(w)}`);
    }
    expect(wrong).toEqual([]);
    // Nothing else was logged for these methods: the 1,000 calls are all the entries on notes, tasks and contacts.
    expect(rows.filter((r) => ["notes", "tasks", "contacts"].includes(r.service)).length).toBe(975);
    expect(rows.filter((r) => r.service === "agent" && r.method === "ask").length).toBe(25);

    // Who called, with what, and who let it through.
    const byMarker = (m: string) => [...found].find(([k]) => k.endsWith(` ${m}`))![1][0];
    const account = (await h.row<{ id: string }>("SELECT id FROM accounts WHERE username = ?", "alice"))!.id;
    expect(byMarker("h-add-0")).toMatchObject({ account, via: "token", credential_name: "token", approved: "policy" });
    expect(byMarker("h-add-0").credential).toMatch(/.+/);
    expect(byMarker("h-add-0").args_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(byMarker("h-401-0")).toMatchObject({ account: null, via: "none", credential: null, approved: "nobody" });
    expect(byMarker("h-403-0")).toMatchObject({ account, approved: "nobody" });
    expect(byMarker("h-403-0").credential).not.toBe(byMarker("h-add-0").credential);
    expect(byMarker("a-tool-0").call_id.startsWith(byMarker("a-ask-0").call_id + ".")).toBe(true);
    // What the log says was charged is what the ledger took, call by call.
    const charges = await h.rows<{ request_id: string; delta: number }>("SELECT request_id, delta FROM pay_ledger WHERE reason = 'charge'");
    expect(charges.length).toBeGreaterThan(0);
    const charged = new Map(rows.filter((r) => Number(r.credits) > 0).map((r) => [r.call_id, Number(r.credits)]));
    expect(new Map(charges.map((c) => [c.request_id, -Number(c.delta)]))).toEqual(charged);
  });
});

describe("a batch of entries", () => {
  test("reads held for a batch are kept in the order they ended, their previews as made, whatever their text holds", async () => {
    const titles = ['a "quoted" title', "back\\slash \\u0041 and \\n", "ünïcödé ✓ 日本語", `${"x".repeat(79)}😀 cut inside the emoji`, "null", "123", "-> ->> ::text"];
    const before = (await entries()).length;
    for (const title of titles) expect((await h.call("notes/get", { title }, { token: alice })).status).toBe(404);
    const rows = (await entries()).slice(before);
    expect(rows.map((e) => e.method)).toEqual(titles.map(() => "get"));
    expect(rows.map((e) => e.args)).toEqual(titles.map((title) => previewArgs({ title })));
    expect(rows.map((e) => [e.outcome, Number(e.status), e.credential_name])).toEqual(titles.map(() => ["not_found", 404, rows[0].credential_name]));
  });
});

describe("a write and its entry", () => {
  test("a write whose entry cannot be written is undone, and its refusal is what the log keeps", async () => {
    expect((await h.call("notes/add", { title: "doomed read", text: "r" }, { token: alice })).status).toBe(200);
    // The store refuses the success entry of this one call, as a full disk or a failing database would.
    if (isPg(h.rt.store)) {
      await h.exec(
        "CREATE FUNCTION refuse_doomed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.kind IN (SELECT id FROM audit_kinds WHERE outcome = 'ok') AND NEW.args LIKE '%doomed%' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$",
      );
      await h.exec("CREATE TRIGGER refuse_doomed BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse_doomed()");
    } else {
      await h.exec("CREATE TRIGGER refuse_doomed BEFORE INSERT ON audit_log WHEN NEW.kind IN (SELECT id FROM audit_kinds WHERE outcome = 'ok') AND NEW.args LIKE '%doomed%' BEGIN SELECT RAISE(ABORT, 'refused'); END");
    }
    try {
      const r = await h.call("notes/add", { title: "doomed", text: "never kept" }, { token: alice });
      expect(r.status).toBeGreaterThanOrEqual(500);
      expect((await h.call("notes/get", { title: "doomed" }, { token: alice })).status).toBe(404);
      const rows = (await entries()).filter((e) => e.args.includes("doomed") && e.method === "add");
      expect(rows.map((e) => e.outcome)).toEqual(["ok", r.body.error.kind]);
      // A read's entry the store refuses is lost alone: the others of its batch are kept.
      expect((await h.call("notes/get", { title: "doomed read" }, { token: alice })).status).toBe(200);
      expect((await h.call("notes/get", { title: "its neighbour" }, { token: alice })).status).toBe(404);
      const reads = (await entries()).filter((e) => e.method === "get" && (e.args.includes("doomed read") || e.args.includes("its neighbour")));
      expect(reads.map((e) => e.outcome)).toEqual(["not_found"]);
    } finally {
      await h.exec("DROP TRIGGER refuse_doomed" + (isPg(h.rt.store) ? " ON audit_log" : ""));
    }
  });

  test("a kind first seen in a write that rolls back is made again by the next entry of that kind, which is kept whole", async () => {
    // A token of its own: its entries are of kinds the log has not seen.
    const fresh = await h.token("alice", { scopes: ["notes"] });
    if (isPg(h.rt.store)) {
      await h.exec("CREATE FUNCTION refuse_first() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.args LIKE '%first of its kind%' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$");
      await h.exec("CREATE TRIGGER refuse_first BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse_first()");
    } else {
      await h.exec("CREATE TRIGGER refuse_first BEFORE INSERT ON audit_log WHEN NEW.args LIKE '%first of its kind%' BEGIN SELECT RAISE(ABORT, 'refused'); END");
    }
    try {
      expect((await h.call("notes/add", { title: "first of its kind", text: "t" }, { token: fresh })).status).toBeGreaterThanOrEqual(500);
    } finally {
      await h.exec("DROP TRIGGER refuse_first" + (isPg(h.rt.store) ? " ON audit_log" : ""));
    }
    expect((await h.call("notes/add", { title: "second of its kind", text: "t" }, { token: fresh })).status).toBe(200);
    // The refusal of the first waited for a batch: the second's entry, committed with its write, came before it.
    const rows = (await entries()).filter((e) => e.args.includes("of its kind"));
    expect(rows.map((e) => [JSON.parse(e.args).title, e.method, e.outcome]).sort()).toEqual([
      ["first of its kind", "add", "internal"],
      ["second of its kind", "add", "ok"],
    ]);
    // Every row names a kind that is there.
    expect((await h.rows("SELECT l.id FROM audit_log l LEFT JOIN audit_kinds k ON k.id = l.kind WHERE k.id IS NULL")).length).toBe(0);
  });

  test("a write that answered has its entry committed with it, before any batch is written", async () => {
    const r = await h.call("notes/add", { title: "kept at once", text: "t" }, { token: alice });
    expect(r.status).toBe(200);
    // Read straight from the database, without flushing what is held.
    const rows = await h.rows<Row>("SELECT * FROM audit_entries WHERE method = 'add' AND args LIKE '%kept at once%'");
    expect(rows.map((e) => e.outcome)).toEqual(["ok"]);
  });

  test("entries are never changed in place", async () => {
    const e = await h.exec("UPDATE audit_log SET args = '{}'").then(
      () => null,
      (err: Error) => err,
    );
    expect(String(e) + String((e as { cause?: unknown } | null)?.cause)).toContain("append-only");
    expect((await h.rows("SELECT id FROM audit_entries WHERE outcome <> 'ok'")).length).toBeGreaterThan(0);
  });
});

describe("secrets", () => {
  test("the preview masks fields named like secrets, cuts long strings and keeps a hash; the secret is stored nowhere in the log", async () => {
    const secret = "sk-live-9f8e7d6c5b4a39281706";
    const long = "L".repeat(500);
    const r = await h.call("notes/add", { title: "with secrets", text: long, password: secret, apiKey: secret, token: secret }, { token: alice });
    expect(r.status).toBe(400);
    await h.call("notes/add", { title: "long one", text: `${long}${secret}` }, { token: alice });
    const rows = await entries();
    for (const e of rows) expect(JSON.stringify(e)).not.toContain(secret);
    const e = rows.find((x) => x.args.includes("with secrets"))!;
    const args = JSON.parse(e.args);
    expect(args).toMatchObject({ password: "(hidden)", apiKey: "(hidden)", token: "(hidden)" });
    expect(args.text.length).toBeLessThan(120);
    const sent = { title: "with secrets", text: long, password: secret, apiKey: secret, token: secret };
    const canonical = JSON.stringify(Object.fromEntries(Object.entries(sent).sort(([a], [b]) => (a < b ? -1 : 1))));
    expect(e.args_hash).toBe(new Bun.CryptoHasher("sha256").update(canonical).digest("hex"));
  });

  test("arguments kept as their own JSON (flat, short, sorted, no secret) are previewed and hashed as any others are", async () => {
    const cases: unknown[] = [
      {},
      { title: "bench" },
      { a: 1, b: true, c: null, d: "x".repeat(80) },
      { b: 1, a: 2 },
      { title: "shopping", text: "milk" },
      { z: "last", "10": 1, a: null, "9": false },
      { "9": 1, "10": 2 },
      { title: "x".repeat(81) },
      { password: "hunter2", title: "t" },
      { n: Number.NaN, z: -0 },
      { u: undefined, v: 1 },
      { nested: { a: 1 } },
      { list: [1, 2] },
      { big: 10n },
      Object.assign(Object.create({ inherited: 1 }), { own: 2 }),
      undefined,
    ];
    for (const args of cases) expect(argsEntry(args)).toEqual({ args: previewArgs(args), argsHash: hashArgs(args) });
    const r = await h.call("notes/get", { title: "no such note, plainly" }, { token: alice });
    expect(r.status).toBe(404);
    await h.rt.audit!.flush();
    const e = (await entries()).find((x) => x.args.includes("no such note, plainly"))!;
    expect(e.args).toBe(JSON.stringify({ title: "no such note, plainly" }));
    expect(e.args_hash).toBe(new Bun.CryptoHasher("sha256").update(e.args).digest("hex"));
  });
});

describe("/activity", () => {
  const auth = () => ({ cookie: session.cookie });

  test("only a signed-in account reads it, and only its own entries", async () => {
    expect((await get(h, "/activity")).status).toBe(401);
    expect((await get(h, "/activity", { accept: "text/html" })).status).toBe(303);
    await h.call("notes/add", { title: "bob's", text: "b" }, { token: await h.token("bob") });
    const r = await get(h, "/activity?method=notes/add", auth());
    expect(r.status).toBe(200);
    expect(r.body.result.entries.length).toBe(50);
    expect(r.body.result.entries.some((e: any) => JSON.stringify(e.args).includes("bob's"))).toBe(false);
  });

  test("filters by method, outcome, credential and date, and pages to older entries without repeats", async () => {
    const refused = await get(h, "/activity?outcome=forbidden", auth());
    expect(refused.body.result.entries.every((e: any) => e.outcome === "forbidden" && e.status === 403)).toBe(true);
    const some = await get(h, "/activity?outcome=refused&method=tasks/create", auth());
    expect(some.body.result.entries.length).toBe(50);
    const seen = new Set<number>();
    let next = some.body.result.next;
    for (const e of some.body.result.entries) seen.add(e.id);
    while (next) {
      const p = await get(h, `/activity?outcome=refused&method=tasks/create&before=${next}`, auth());
      for (const e of p.body.result.entries) {
        expect(seen.has(e.id)).toBe(false);
        seen.add(e.id);
      }
      next = p.body.result.next;
    }
    expect(seen.size).toBe(120);
    const cred = some.body.result.entries[0].credential;
    const byCred = await get(h, `/activity?credential=${cred}`, auth());
    expect(byCred.body.result.entries.every((e: any) => e.credential === cred)).toBe(true);
    expect((await get(h, "/activity?from=2026-11-22", auth())).body.result.entries).toEqual([]);
    expect((await get(h, "/activity?to=2026-11-21&method=notes", auth())).body.result.entries.length).toBe(50);
    const bad = await get(h, "/activity?from=yesterday", auth());
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe("from");
  });

  test("exports every selected entry as JSON lines and as CSV", async () => {
    const jsonl = await fetch(`${h.url}/activity/export.jsonl?method=tasks/create`, { headers: auth() });
    expect(jsonl.headers.get("content-type")).toContain("ndjson");
    const lines = (await jsonl.text()).trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.length).toBe(120);
    expect(lines.every((l) => l.service === "tasks" && l.outcome === "forbidden")).toBe(true);
    const csv = await fetch(`${h.url}/activity/export.csv?method=tasks/create`, { headers: auth() });
    expect(csv.headers.get("content-disposition")).toContain(".csv");
    const rows = (await csv.text()).trim().split("\r\n");
    expect(rows[0]).toStartWith("id,at,callId,account");
    expect(rows.length).toBe(121);
    const all = (await (await fetch(`${h.url}/activity/export.jsonl`, { headers: auth() })).text()).trim().split("\n");
    const total = await h.row<{ n: number }>("SELECT COUNT(*) AS n FROM audit_log WHERE account = (SELECT id FROM accounts WHERE username = 'alice')");
    expect(all.length).toBe(Number(total!.n));
  });

  test("entries older than HEARTH_AUDIT_DAYS (90 by default) are removed", async () => {
    const before = (await entries()).length;
    expect(before).toBeGreaterThan(1000);
    clock.advance(91 * 86_400_000);
    await h.call("notes/list", {}, { token: alice });
    const left = await entries();
    expect(left.length).toBe(1);
    expect(left[0].method).toBe("list");
  });
});
