// one store: JSON-RPC framing over /mcp and stdio; no refusal in it comes from the store
// Protocol errors as clients see them, in both eras, over /mcp and stdio:
// tools/call arguments that are no object are -32602 saying so, no message
// repeats the client's own "MCP error <code>:" prefix, a resource that does
// not exist is -32002 with its URI (2026-07-28's -32602 there), and a
// JSON-RPC batch is refused where the protocol has none.
import "./patient.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { EXTENSION_ID, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/server";
import { startHearth, type Hearth } from "../harness.ts";
import { mcpClient } from "./client.ts";

const MODERN = "2026-07-28";
const root = join(import.meta.dir, "..", "..");
const main = join(root, "core", "cli", "main.ts");
const UI = { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } };
let h: Hearth;
let alice: string;

beforeAll(async () => {
  h = await startHearth();
  alice = await h.token("alice");
  expect((await h.call("notes/add", { title: "Garden", text: "plant beans" }, { token: alice })).status).toBe(200);
});
afterAll(() => h.stop());

type Caller = { callTool(p: { name: string; arguments?: unknown }): Promise<unknown>; readResource(p: { uri: string }): Promise<unknown> };
type Connected = { client: Caller; close(): Promise<void> };

async function refusal(p: Promise<unknown>): Promise<{ code: number; message: string; data?: any }> {
  try {
    await p;
  } catch (e) {
    return e as { code: number; message: string; data?: any };
  }
  throw new Error("the request was answered, not refused");
}

const pinned = () => new ClientV2({ name: "hearth-test-2026", version: "1.0.0" }, { versionNegotiation: { mode: { pin: MODERN } }, capabilities: UI as never });
const stdioEnv = () => ({ ...h.env, HEARTH_LOG: "off", HEARTH_TOKEN: alice });

const connections: [string, "2025" | "2026", () => Promise<Connected>][] = [
  ["a 2025-11-25 session over /mcp", "2025", async () => {
    const c = await mcpClient(h.url, { token: alice, capabilities: UI });
    return { client: c.client as unknown as Caller, close: c.close };
  }],
  ["a 2026-07-28 client over /mcp", "2026", async () => {
    const client = pinned();
    await client.connect(new HttpV2(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${alice}` } } }));
    return { client: client as unknown as Caller, close: () => client.close() };
  }],
  ["a 2025-11-25 client over stdio", "2025", async () => {
    const client = new ClientV1({ name: "hearth-test", version: "1.0.0" }, { capabilities: UI as never });
    await client.connect(new StdioV1({ command: process.execPath, args: [main, "mcp"], cwd: root, env: stdioEnv(), stderr: "pipe" }));
    return { client: client as unknown as Caller, close: () => client.close() };
  }],
  ["a 2026-07-28 client over stdio", "2026", async () => {
    const client = pinned();
    await client.connect(new StdioV2({ command: process.execPath, args: [main, "mcp"], cwd: root, env: stdioEnv(), stderr: "pipe" }));
    return { client: client as unknown as Caller, close: () => client.close() };
  }],
];

for (const [name, era, connect] of connections) {
  describe(name, () => {
    // One connection for both tests: over stdio each is a process of its own, loading the app, and the refusals leave
    // it answering (the first test checks that it does).
    let c: Connected;
    beforeAll(async () => {
      c = await connect();
    });
    afterAll(() => c?.close());

    test("arguments that are null, an array or a string are -32602 naming arguments, not a schema dump", async () => {
      for (const [args, kind] of [[null, "null"], [["Garden"], "an array"], ["Garden", "a string"]] as const) {
        const e = await refusal(c.client.callTool({ name: "notes_get", arguments: args }));
        expect(e.code).toBe(-32602);
        expect(e.message).toContain(`arguments must be an object`);
        expect(e.message).toContain(`(got ${kind})`);
        expect(e.message).not.toContain("expected");
        expect(e.message).not.toContain("[\n");
        expect(e.message.match(/MCP error/g)?.length ?? 0).toBeLessThanOrEqual(1);
      }
      // The connection still answers.
      expect(await c.client.callTool({ name: "notes_get", arguments: { title: "Garden" } })).toMatchObject({ structuredContent: { result: { text: "plant beans" } } });
    });

    test("an unknown tool and an unknown resource say so once, the resource with its URI and its era's code", async () => {
      const tool = await refusal(c.client.callTool({ name: "no_such_tool", arguments: {} }));
      expect(tool.code).toBe(-32602);
      expect(tool.message).toContain('no tool "no_such_tool" here');
      expect(tool.message.match(/MCP error/g)?.length ?? 0).toBeLessThanOrEqual(1);
      const uri = "ui://hearth/apps/no-such-app";
      const res = await refusal(c.client.readResource({ uri }));
      // 2025-11-25 says -32002; 2026-07-28 says -32602 with the URI as the data.
      expect(res.code).toBe(era === "2025" ? -32002 : -32602);
      expect(res.data).toEqual({ uri });
      expect(res.message).toContain(`no resource "${uri}" here`);
      expect(res.message.match(/MCP error/g)?.length ?? 0).toBeLessThanOrEqual(1);
    });
  });
}

describe("JSON-RPC batches", () => {
  const headers = { authorization: `Bearer ${"TOKEN"}`, accept: "application/json, text/event-stream", "content-type": "application/json" };
  const post = (body: unknown, extra: Record<string, string>) =>
    fetch(`${h.url}/mcp`, { method: "POST", headers: { ...headers, authorization: `Bearer ${alice}`, ...extra }, body: JSON.stringify(body) });
  const add = (id: number, title: string) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "notes_add", arguments: { title, text: "from a batch" } } });

  test("are refused in a 2025-11-25 session with -32600, and nothing in them runs", async () => {
    const c = await mcpClient(h.url, { token: alice });
    try {
      const sid = c.transport.sessionId!;
      const r = await post([add(1, "Batched one"), add(2, "Batched two")], { "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" });
      expect(r.status).toBe(400);
      const body = await r.json();
      expect(body.error.code).toBe(-32600);
      expect(body.error.message).toContain("batch");
      for (const title of ["Batched one", "Batched two"]) expect((await h.call("notes/get", { title }, { token: alice })).status).toBe(404);
      // The session goes on.
      expect((await c.call("notes_get", { title: "Garden" })).isError).toBeFalsy();
    } finally {
      await c.close();
    }
  });

  test("an initialize in a batch is refused, and opens no session", async () => {
    const init = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "1" } } };
    const r = await post([init], {});
    expect(r.status).toBe(400);
    expect(r.headers.get("mcp-session-id")).toBeNull();
    expect((await r.json()).error.code).toBe(-32600);
  });

  test("a stateless request naming no revision is taken as 2025-03-26, which had batches", async () => {
    const r = await post([{ jsonrpc: "2.0", id: 1, method: "tools/list" }], {});
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(Array.isArray(body) ? body[0].result.tools.length : body.result.tools.length).toBeGreaterThan(0);
  });
});
