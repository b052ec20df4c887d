// /mcp answers tools/call and tools/list itself rather than through a fresh SDK
// server per request. Here every such answer from the running server is
// compared with the answer the SDK alone gives to the same request on the same
// instance, statelessly and in a session, including the refusals and the
// messages that must fall through to the SDK.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { directAnswer } from "../../core/mcp/direct.ts";
import { asMcpPost, handleMcp, type McpEras } from "../../core/mcp/http.ts";
import { modernHttpHandler } from "../../core/mcp/modern.ts";
import { parseFilter } from "../../core/mcp/tools.ts";
import type { McpCallContext } from "../../core/mcp/server.ts";
import { McpSessions } from "../../core/mcp/sessions.ts";
import { startHearth, type Hearth } from "../harness.ts";

let h: Hearth;
let alice: string;
let scoped: string;
let sdkOnly: McpEras;

beforeAll(async () => {
  h = await startHearth();
  alice = await h.token("alice");
  scoped = await h.token("alice", { scopes: ["notes"] });
  expect((await h.call("notes/add", { title: "Bike", text: "oil the chain" }, { token: alice })).status).toBe(200);
  expect((await h.call("notes/add", { title: ODD, text: ODD_TEXT }, { token: alice })).status).toBe(200);
  sdkOnly = {
    sessions: new McpSessions(h.rt, (extra) => (extra.authInfo?.extra as { hearth: McpCallContext }).hearth),
    modern: modernHttpHandler(h.rt, Number(h.rt.config.HEARTH_BODY_LIMIT)),
  };
});
afterAll(() => h.stop());

const ACCEPT = "application/json, text/event-stream";
/** A note whose JSON needs escaping of every kind: quotes, backslashes, controls, line separators, astral characters, markup. */
const ODD = 'say "hi" \\ there';
const ODD_TEXT = 'line one\nline two\t"quoted" \\back\u2028sep\u0001 🚲 </script><!-- é';

interface Sent {
  status: number;
  type: string | null;
  session: boolean;
  body: unknown;
}

async function read(res: Response): Promise<Sent> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, type: res.headers.get("content-type"), session: res.headers.has("mcp-session-id"), body };
}

function request(path: string, message: unknown, headers: Record<string, string>): Request {
  return new Request(`${h.url}${path}`, { method: "POST", headers, body: JSON.stringify(message) });
}

type Who = "alice" | "scoped";
type Case = [string, unknown, { token?: Who; path?: string; headers?: Record<string, string>; sdk?: true }];
const tokenOf = (who?: Who) => (who === "alice" ? alice : who === "scoped" ? scoped : undefined);

/** The same request to the running server and to the SDK alone on the same instance. */
async function both(message: unknown, o: { token?: Who; path?: string; headers?: Record<string, string>; sessions?: [string, string] } = {}) {
  const headers: Record<string, string> = { "content-type": "application/json", accept: ACCEPT, ...(o.headers ?? {}) };
  if (o.token) headers.authorization = `Bearer ${tokenOf(o.token)}`;
  const path = o.path ?? "/mcp";
  const [served, bySdk] = await Promise.all([
    fetch(request(path, message, o.sessions ? { ...headers, "mcp-session-id": o.sessions[0] } : headers)).then(read),
    handleMcp(h.rt, sdkOnly, request(path, message, o.sessions ? { ...headers, "mcp-session-id": o.sessions[1] } : headers), "127.0.0.1", false).then(read),
  ]);
  return { served, bySdk };
}

const call = (id: number | string, params: unknown) => ({ jsonrpc: "2.0", id, method: "tools/call", params });
const list = (id: number | string) => ({ jsonrpc: "2.0", id, method: "tools/list" });

// `sdk: true` marks the messages the server leaves to the SDK; every other one it answers itself.
const cases: Case[] = [
  ["tools/list for a stranger", list(1), {}],
  ["tools/list for an account", list(2), { token: "alice" }],
  ["tools/list for a scoped token", list(3), { token: "scoped" }],
  ["tools/list with ?tools=", list(4), { token: "alice", path: "/mcp?tools=notes" }],
  ["tools/list with a string id and a cursor", { jsonrpc: "2.0", id: "a-1", method: "tools/list", params: { cursor: "x" } }, { token: "alice" }],
  ["a call that succeeds", call(5, { name: "notes_get", arguments: { title: "Bike" } }), { token: "alice" }],
  ["a call with _meta", call(6, { name: "notes_get", arguments: { title: "Bike" }, _meta: { progressToken: 7 } }), { token: "alice" }],
  ["a call refused by the method", call(7, { name: "notes_get", arguments: { title: "Car" } }), { token: "alice" }],
  ["a call without an account", call(8, { name: "notes_get", arguments: { title: "Bike" } }), {}],
  ["a call with bad arguments", call(9, { name: "notes_get", arguments: { title: 3 } }), { token: "alice" }],
  ["a call with no arguments at all", call(10, { name: "notes_list" }), { token: "alice" }],
  ["a call out of scope", call(11, { name: "tasks_list", arguments: {} }), { token: "scoped" }],
  ["a call to an unknown tool", call(12, { name: "notes_fly", arguments: {} }), { token: "alice" }],
  ["a call to a tool outside ?tools=", call(13, { name: "tasks_list", arguments: {} }), { token: "alice", path: "/mcp?tools=notes" }],
  ["a call without a name (the SDK's refusal)", call(14, { arguments: {} }), { token: "alice", sdk: true }],
  ["a call with a non-object arguments", call(15, { name: "notes_get", arguments: "title" }), { token: "alice", sdk: true }],
  ["a message with an unknown member", { jsonrpc: "2.0", id: 16, method: "tools/list", extra: true }, { token: "alice", sdk: true }],
  ["a message without an id (a notification)", { jsonrpc: "2.0", method: "tools/list" }, { token: "alice", sdk: true }],
  ["an unsupported protocol version", list(17), { token: "alice", headers: { "mcp-protocol-version": "1999-01-01" }, sdk: true }],
  ["a supported protocol version", list(18), { token: "alice", headers: { "mcp-protocol-version": "2025-06-18" } }],
  ["a client that accepts only JSON", list(19), { token: "alice", headers: { accept: "application/json" } }],
  ["a client that accepts only HTML", list(20), { token: "alice", headers: { accept: "text/html" }, sdk: true }],
  ["a body sent as text/plain", list(21), { token: "alice", headers: { "content-type": "text/plain" }, sdk: true }],
  ["a call whose result JSON escapes", call(24, { name: "notes_get", arguments: { title: ODD } }), { token: "alice" }],
  ["a batch", [list(22), call(23, { name: "notes_get", arguments: { title: "Bike" } })], { token: "alice", sdk: true }],
];

test("the server answers the tools/call and tools/list messages itself, and leaves the rest to the SDK", async () => {
  for (const [name, message, o] of cases) {
    const headers: Record<string, string> = { "content-type": "application/json", accept: ACCEPT, ...(o.headers ?? {}) };
    const url = new URL(`${h.url}${o.path ?? "/mcp"}`);
    const caller = o.token
      ? await h.rt.tokens.identify(tokenOf(o.token)!, h.rt.clock.now().getTime())
      : { account: null, scopes: [] as string[], via: "none" as const };
    const ctx: McpCallContext = { caller, filter: parseFilter(url.searchParams.get("tools")), baseUrl: url.origin };
    const answered = directAnswer(h.rt, ctx, message, asMcpPost(request(o.path ?? "/mcp", message, headers)));
    expect(answered === null, name).toBe(o.sdk === true);
    await answered;
  }
});

describe("stateless", () => {
  for (const [name, message, o] of cases)
    test(name, async () => {
      const { served, bySdk } = await both(message, o);
      expect(served).toEqual(bySdk);
    });
});

describe("in a session", () => {
  let sessions: [string, string];
  beforeAll(async () => {
    const init = {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    };
    const headers = { "content-type": "application/json", accept: ACCEPT };
    const a = await fetch(request("/mcp", init, headers));
    const b = await handleMcp(h.rt, sdkOnly, request("/mcp", init, headers), "127.0.0.1", false);
    expect(await read(a)).toEqual(await read(b));
    sessions = [a.headers.get("mcp-session-id")!, b.headers.get("mcp-session-id")!];
    expect(sessions[0]).toBeString();
    expect(sessions[1]).toBeString();
  });
  for (const [name, message, o] of cases)
    test(name, async () => {
      const { served, bySdk } = await both(message, { ...o, sessions });
      expect(served).toEqual(bySdk);
    });
});

test("tools/call answered directly carries its result once as structured content and once as the same JSON in text, and each header /mcp promises exactly once: CORS, the security headers, JSON, and the session's id in a session", async () => {
  const base = { "content-type": "application/json", accept: ACCEPT, authorization: `Bearer ${alice}` };
  const init = await fetch(`${h.url}/mcp`, {
    method: "POST",
    headers: { ...base, "mcp-protocol-version": "2025-06-18" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }),
  });
  const sid = init.headers.get("mcp-session-id")!;
  await init.arrayBuffer();
  expect(sid).toBeTruthy();
  const call = { name: "notes_get", arguments: { title: ODD } };
  const modern = "2026-07-28";
  const answers = {
    session: { headers: { ...base, "mcp-protocol-version": "2025-06-18", "mcp-session-id": sid }, params: call },
    stateless: { headers: { ...base, "mcp-protocol-version": "2025-06-18" }, params: call },
    modern: {
      headers: { ...base, "mcp-protocol-version": modern, "mcp-method": "tools/call", "mcp-name": "notes_get" },
      params: { ...call, _meta: { "io.modelcontextprotocol/protocolVersion": modern, "io.modelcontextprotocol/clientCapabilities": {} } },
    },
  };
  for (const [era, a] of Object.entries(answers)) {
    const res = await fetch(`${h.url}/mcp`, { method: "POST", headers: a.headers, body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: a.params }) });
    const raw = await res.text();
    const body = JSON.parse(raw) as { result: { structuredContent: unknown; content: { type: string; text: string }[] } };
    expect([era, res.status, body.result.structuredContent]).toEqual([era, 200, { result: expect.objectContaining({ title: ODD, text: ODD_TEXT }) }]);
    // The text block is the structured content's JSON, and the answer is JSON as JSON.stringify writes it.
    expect([era, body.result.content]).toEqual([era, [{ type: "text", text: JSON.stringify(body.result.structuredContent) }]]);
    expect([era, raw]).toEqual([era, JSON.stringify(body)]);
    const hd = res.headers;
    expect([era, hd.get("content-type"), hd.get("access-control-allow-origin"), hd.get("x-content-type-options"), hd.get("referrer-policy")]).toEqual([
      era,
      "application/json",
      "*",
      "nosniff",
      "same-origin",
    ]);
    expect(hd.get("access-control-expose-headers")).toContain("Mcp-Session-Id");
    expect(hd.get("content-security-policy")).toStartWith("default-src 'none'");
    expect([era, hd.get("mcp-session-id")]).toEqual([era, era === "session" ? sid : null]);
  }
});

test("POSTs the SDK answers, and ones refused before it reads them, carry CORS and the security headers too, each once", async () => {
  const base = { "content-type": "application/json", accept: ACCEPT, authorization: `Bearer ${alice}`, "mcp-protocol-version": "2025-06-18" };
  const posts = {
    initialize: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }),
    ping: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }),
    "not JSON": "{",
    "no tool name": JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { arguments: {} } }),
  };
  for (const [what, body] of Object.entries(posts)) {
    const res = await fetch(`${h.url}/mcp`, { method: "POST", headers: base, body });
    await res.arrayBuffer();
    const hd = res.headers;
    const once = (name: string) => [...hd.entries()].filter(([k]) => k === name).length;
    expect([what, hd.get("access-control-allow-origin"), hd.get("x-content-type-options"), hd.get("referrer-policy"), once("access-control-allow-origin"), once("x-content-type-options")]).toEqual([
      what,
      "*",
      "nosniff",
      "same-origin",
      1,
      1,
    ]);
    expect([what, hd.get("access-control-expose-headers")]).toEqual([what, expect.stringContaining("Mcp-Session-Id")]);
    expect([what, hd.get("content-security-policy")]).toEqual([what, expect.stringMatching(/^default-src 'none'/)]);
  }
});

test("directly answered calls in several sessions at once each carry their own session's id", async () => {
  const base = { "content-type": "application/json", accept: ACCEPT, authorization: `Bearer ${alice}`, "mcp-protocol-version": "2025-06-18" };
  const open = async () => {
    const init = await fetch(`${h.url}/mcp`, {
      method: "POST",
      headers: base,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }),
    });
    await init.arrayBuffer();
    return init.headers.get("mcp-session-id")!;
  };
  const sids = [await open(), await open(), await open()];
  expect(new Set(sids).size).toBe(3);
  const answers = await Promise.all(
    [...sids, ...sids].map(async (sid, i) => {
      const res = await fetch(`${h.url}/mcp`, {
        method: "POST",
        headers: { ...base, "mcp-session-id": sid },
        body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "notes_get", arguments: { title: "Bike" } } }),
      });
      const body = (await res.json()) as { id: number; result: { isError?: boolean } };
      return [sid, res.headers.get("mcp-session-id"), body.id, body.result.isError ?? false];
    }),
  );
  expect(answers).toEqual([...sids, ...sids].map((sid, i) => [sid, sid, i, false]));
});
