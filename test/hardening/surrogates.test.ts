// Text that is not text: a lone UTF-16 surrogate in any string argument, at
// any depth, of every method of the registry, as it arrives over each surface
// (a JSON escape in a POST body or an MCP call, the bytes of a surrogate
// percent-encoded in a query string). Each is refused with 400 naming the
// path to it, before any provider is asked or anything is stored; no 500.
// Raw bytes that are not UTF-8 are refused too, rather than stored as U+FFFD.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Kind, type TSchema } from "@sinclair/typebox";
import { join } from "node:path";
import { buildRegistry, type MethodEntry } from "../../core/registry.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { minimalArgs, minimalValue } from "../mcp/args.ts";
import { mcpClient } from "../mcp/client.ts";
import { errorShapeProblem, garbageUpstream, hostileEnv, refuseOutside, type Garbage } from "./instance.ts";

const LONE = "a\ud800b";
/** The UTF-8 a lone surrogate would have if it had one (CESU-8's), which is not UTF-8. */
const LONE_IN_QUERY = "a%ED%A0%80b";

const registry = await buildRegistry({ pluginsDir: join(import.meta.dir, "..", "..", "plugins") });

let h: Hearth;
let upstream: Garbage;
let undoProxy: () => void;
let token: string;
let mcp: Awaited<ReturnType<typeof mcpClient>>;

beforeAll(async () => {
  upstream = garbageUpstream();
  undoProxy = refuseOutside();
  h = await startHearth({ env: await hostileEnv(upstream.url, { timeoutMs: 3000 }), clock: new TestClock() });
  token = await h.token("writer");
  await h.grant("writer", 1_000_000);
  mcp = await mcpClient(h.url, { token });
});

afterAll(async () => {
  await mcp?.close();
  await h?.stop();
  upstream?.stop();
  undoProxy?.();
});

type S = Record<string | symbol, any>;
const kindOf = (s: S): string => s[Kind] ?? s.type ?? "Unknown";

/** Values of a schema with a lone surrogate in one string slot each, and the path to it. */
function planted(schema: TSchema, path: string): { value: unknown; field: string }[] {
  const s = schema as S;
  if ("const" in s && typeof s.const === "string") return [{ value: LONE, field: path }];
  if (Array.isArray(s.anyOf)) return s.anyOf.flatMap((o: TSchema) => planted(o, path)).slice(0, 2);
  switch (kindOf(s)) {
    case "String":
    case "string":
      return [{ value: LONE, field: path }];
    case "Array":
    case "array":
      // Behind a good item, so the path names the second.
      return planted(s.items, `${path}[1]`).map((p) => ({ value: [minimalValue(s.items), p.value], field: p.field }));
    case "Object":
    case "object": {
      const base = minimalArgs(s as TSchema);
      return Object.entries((s.properties ?? {}) as Record<string, TSchema>).flatMap(([k, p]) =>
        planted(p, `${path}.${k}`).map((x) => ({ value: { ...base, [k]: x.value }, field: x.field })),
      );
    }
    case "Record":
      return [{ value: { key: LONE }, field: `${path}.key` }];
    default:
      return [];
  }
}

interface Case {
  args: Record<string, unknown>;
  field: string;
  /** The argument, when it can be sent in a query string (a string, or a list of them). */
  query?: string;
}

function casesFor(e: MethodEntry): Case[] {
  const base = minimalArgs(e.def.args);
  const props = (e.def.args.properties ?? {}) as Record<string, TSchema>;
  return Object.entries(props).flatMap(([name, p]) =>
    planted(p, name).map((x) => ({
      args: { ...base, [name]: x.value },
      field: x.field,
      query: typeof x.value === "string" || (Array.isArray(x.value) && x.value.every((v) => typeof v === "string")) ? name : undefined,
    })),
  );
}

function judged(via: string, e: MethodEntry, c: Case, status: number, body: unknown, field: string): string | null {
  const where = `${via} ${e.path} ${c.field}`;
  if (status !== 400) return `${where}: ${status} ${JSON.stringify(body).slice(0, 200)}`;
  const shape = errorShapeProblem(status, body);
  if (shape) return `${where}: ${shape}`;
  const err = (body as { error: { field: string; message: string } }).error;
  if (err.field !== field) return `${where}: refused naming "${err.field}" (${err.message})`;
  return null;
}

test("a lone surrogate in any string argument of any method, at any depth, is refused with 400 naming its path over POST, GET and MCP", async () => {
  const failures: string[] = [];
  let cases = 0;
  for (const e of registry.list()) {
    for (const c of casesFor(e)) {
      cases++;
      const post = await h.call(e.path, structuredClone(c.args), { token, method: "POST" });
      const p1 = judged("POST", e, c, post.status, post.body, c.field);
      if (p1) failures.push(p1);
      if (e.def.access === "public") {
        // A stranger's call is checked before any price is asked.
        const anon = await h.call(e.path, structuredClone(c.args), { method: "POST" });
        const p2 = judged("stranger POST", e, c, anon.status, anon.body, c.field);
        if (p2) failures.push(p2);
      }
      if (e.def.kind === "read" && c.query) {
        const rest = new URLSearchParams();
        for (const [k, v] of Object.entries(c.args)) if (k !== c.query) rest.set(k, typeof v === "object" ? JSON.stringify(v) : String(v));
        const qs = [rest.toString(), `${c.query}=${LONE_IN_QUERY}`].filter(Boolean).join("&");
        const res = await fetch(`${h.url}/api/v1/${e.path}?${qs}`, { headers: { authorization: `Bearer ${token}` } });
        const p3 = judged("GET", e, c, res.status, await res.json(), c.query);
        if (p3) failures.push(p3);
      }
      const viaMcp = await mcp.call(e.tool, structuredClone(c.args));
      const body = viaMcp.structuredContent as { error?: { status: number } } | undefined;
      const p4 = judged("MCP", e, c, body?.error?.status ?? (viaMcp.isError ? 500 : 200), body, c.field);
      if (p4) failures.push(p4);
    }
  }
  expect(cases).toBeGreaterThan(100);
  expect(failures).toEqual([]);
  // Nothing reached a provider: every call was refused at the boundary.
  expect(upstream.hits()).toBe(0);
  expect((await fetch(`${h.url}/health`)).status).toBe(200);
});

test("the first of several lone surrogates is named by its path, through lists, objects and the names of an object", async () => {
  const pay = (args: unknown) =>
    fetch(`${h.url}/api/v1/wallet/pay`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(args) });
  // JSON.stringify writes a lone surrogate as the escape "\ud800", as a client would send it.
  expect(JSON.stringify(LONE)).toBe('"a\\ud800b"');
  const deep = await pay({ tool: "notes_add", args: { title: "ok", more: { list: ["fine", "x\udfff", LONE] } } });
  const body = await deep.json();
  expect(deep.status).toBe(400);
  expect(body.error).toMatchObject({ kind: "invalid_argument", field: "args.more.list[1]" });
  expect(body.error.message).toContain("U+DFFF");
  const named = await pay({ tool: "notes_add", args: { title: "ok", [LONE]: 1 } });
  expect(named.status).toBe(400);
  expect((await named.json()).error).toMatchObject({ field: "args" });
  // A surrogate pair is a character like any other, and is kept as it was sent.
  const pair = "\ud83d\ude00 keeps";
  const ok = await h.call("notes/add", { title: pair, text: pair }, { token });
  expect(ok.status).toBe(200);
  const got = await h.call("notes/get", { title: pair }, { token });
  expect(got.body.result).toMatchObject({ title: pair, text: pair });
});

test("bytes that are not UTF-8 in a body or a query string are refused, not stored as U+FFFD", async () => {
  const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const head = new TextEncoder().encode('{"title":"raw","text":"a');
  const tail = new TextEncoder().encode('b"}');
  // A lone surrogate's three bytes as CESU-8 writes them, then a stray continuation byte.
  for (const bad of [[0xed, 0xa0, 0x80], [0x80], [0xff]]) {
    const body = new Uint8Array([...head, ...bad, ...tail]);
    const res = await fetch(`${h.url}/api/v1/notes/add`, { method: "POST", headers: auth, body });
    const got = await res.json();
    expect(res.status).toBe(400);
    expect(got.error).toMatchObject({ kind: "invalid_argument", field: "body" });
  }
  const none = await h.call("notes/get", { title: "raw" }, { token });
  expect(none.status).toBe(404);
  // A U+FFFD sent as UTF-8 is text like any other, over either.
  const fffd = "a\ufffdb";
  expect((await h.call("notes/add", { title: fffd, text: fffd }, { token })).status).toBe(200);
  const read = await fetch(`${h.url}/api/v1/notes/get?title=${encodeURIComponent(fffd)}`, { headers: auth });
  expect((await read.json()).result).toMatchObject({ title: fffd, text: fffd });
  const q = await fetch(`${h.url}/api/v1/notes/get?title=a%FFb`, { headers: auth });
  expect(q.status).toBe(400);
  expect((await q.json()).error).toMatchObject({ field: "title" });
});
