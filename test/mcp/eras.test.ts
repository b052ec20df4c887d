// one store: the protocol's two eras over /mcp and stdio; the tools they call run on both stores in test/mcp (parity, tools)
// Both protocol eras on one server: a client pinned to 2026-07-28 (stateless,
// no initialize, per-request _meta, server/discover) and a 2025-11-25 client
// keeping a session, over /mcp and over `hearth mcp` on stdio.
import "./patient.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { handleMcp, type McpEras } from "../../core/mcp/http.ts";
import { modernHttpHandler } from "../../core/mcp/modern.ts";
import type { McpCallContext } from "../../core/mcp/server.ts";
import { McpSessions } from "../../core/mcp/sessions.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { mcpClient, rpc } from "./client.ts";

const MODERN = "2026-07-28";
const root = join(import.meta.dir, "..", "..");
const main = join(root, "core", "cli", "main.ts");
let h: Hearth;
let alice: string;

beforeAll(async () => {
  h = await startHearth();
  alice = await h.token("alice");
  expect((await h.call("notes/add", { title: "Garden", text: "plant beans" }, { token: alice })).status).toBe(200);
});
afterAll(() => h.stop());

const pinned = () => new ClientV2({ name: "hearth-test-2026", version: "1.0.0" }, { versionNegotiation: { mode: { pin: MODERN } } });
const toolNames = () =>
  h.rt.registry
    .list()
    .map((e) => e.tool)
    .sort();

describe("over /mcp", () => {
  test("a client pinned to 2026-07-28 lists and calls tools statelessly, with the same answers as HTTP", async () => {
    const client = pinned();
    const transport = new HttpV2(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${alice}` } } });
    await client.connect(transport);
    try {
      expect(client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion).toBe(MODERN);
      expect(transport.sessionId).toBeUndefined();
      expect(client.getServerVersion()?.name).toBe("hearth");
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(toolNames());
      const got = (await client.callTool({ name: "notes_get", arguments: { title: "Garden" } })) as CallToolResult;
      const http = await h.call("notes/get", { title: "Garden" }, { token: alice });
      expect(got.isError).toBeFalsy();
      expect(got.structuredContent).toEqual(http.body);
      const missing = (await client.callTool({ name: "notes_get", arguments: { title: "Orchard" } })) as CallToolResult;
      expect(missing.isError).toBe(true);
      expect(missing.structuredContent).toEqual((await h.call("notes/get", { title: "Orchard" }, { token: alice })).body);
    } finally {
      await client.close();
    }
  });

  test("a 2025-11-25 client keeps its session beside it on the same endpoint", async () => {
    const c = await mcpClient(h.url, { token: alice });
    try {
      expect(c.transport.sessionId).toBeString();
      expect((await c.client.listTools()).tools.map((t) => t.name).sort()).toEqual(toolNames());
      const got = await c.call("notes_get", { title: "Garden" });
      expect(got.structuredContent).toEqual((await h.call("notes/get", { title: "Garden" }, { token: alice })).body);
    } finally {
      await c.close();
    }
  });

  const envelope = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} };
  const modernHeaders = (method: string, name?: string) => ({
    authorization: `Bearer ${alice}`,
    accept: "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    ...(name ? { "mcp-name": name } : {}),
  });

  test("server/discover answers with the revision, capabilities and server info, and no session", async () => {
    const r = await rpc(h.url, "server/discover", { _meta: envelope }, modernHeaders("server/discover"));
    expect(r.status).toBe(200);
    expect(r.headers.get("mcp-session-id")).toBeNull();
    expect(r.body.result.supportedVersions).toContain(MODERN);
    expect(r.body.result.capabilities.tools).toBeDefined();
    expect(r.body.result._meta["io.modelcontextprotocol/serverInfo"].name).toBe("hearth");
  });

  test("a stateless tools/call carries resultType and the same structured answer as HTTP", async () => {
    const r = await rpc(h.url, "tools/call", { name: "notes_get", arguments: { title: "Garden" }, _meta: envelope }, modernHeaders("tools/call", "notes_get"));
    expect(r.status).toBe(200);
    expect(r.body.result.resultType).toBe("complete");
    expect(r.body.result.structuredContent).toEqual((await h.call("notes/get", { title: "Garden" }, { token: alice })).body);
  });

  test("a 2026-07-28 request without its envelope, or naming an unknown tool, is -32602", async () => {
    const bare = await rpc(h.url, "tools/list", {}, modernHeaders("tools/list"));
    expect(bare.body.error?.code).toBe(-32602);
    const unknown = await rpc(h.url, "tools/call", { name: "no_such_tool", arguments: {}, _meta: envelope }, modernHeaders("tools/call", "no_such_tool"));
    expect(unknown.body.error?.code).toBe(-32602);
    expect(unknown.body.error.message).toContain("no_such_tool");
    const badCaps = await rpc(
      h.url,
      "tools/list",
      { _meta: { ...envelope, "io.modelcontextprotocol/clientCapabilities": 5 } },
      modernHeaders("tools/list"),
    );
    expect(badCaps.status).toBe(400);
    expect(badCaps.body.error).toMatchObject({ code: -32602, data: { envelope: { key: "io.modelcontextprotocol/clientCapabilities" } } });
    // The quick tools/call path takes only a well-formed envelope: a malformed one is refused as the SDK refuses it.
    for (const bad of [{ "io.modelcontextprotocol/clientCapabilities": 5 }, { "io.modelcontextprotocol/clientInfo": { name: 5 } }]) {
      const call = await rpc(h.url, "tools/call", { name: "notes_get", arguments: { title: "Garden" }, _meta: { ...envelope, ...bad } }, modernHeaders("tools/call", "notes_get"));
      expect(call.body.error?.code).toBe(-32602);
    }
    const later = await rpc(
      h.url,
      "tools/list",
      { _meta: { ...envelope, "io.modelcontextprotocol/protocolVersion": "2099-01-01" } },
      { ...modernHeaders("tools/list"), "mcp-protocol-version": "2099-01-01" },
    );
    expect(later.status).toBe(400);
    expect(later.body.error.data).toMatchObject({ supported: [MODERN], requested: "2099-01-01" });
  });

  test("a header that contradicts the body is refused, and no write is applied", async () => {
    const r = await rpc(
      h.url,
      "tools/call",
      { name: "notes_add", arguments: { title: "Mismatch", text: "x" }, _meta: envelope },
      modernHeaders("tools/call", "notes_delete"),
    );
    expect(r.body.error).toBeDefined();
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect((await h.call("notes/get", { title: "Mismatch" }, { token: alice })).status).toBe(404);
  });
});

describe("the direct 2026-07-28 tools/call", () => {
  // The same requests answered by the running server (which takes the direct road for the
  // everyday tools/call) and by the SDK alone on the same instance must give the same answers.
  let sdkOnly: McpEras;
  beforeAll(() => {
    sdkOnly = {
      sessions: new McpSessions(h.rt, (extra) => (extra.authInfo?.extra as { hearth: McpCallContext }).hearth),
      modern: modernHttpHandler(h.rt, Number(h.rt.config.HEARTH_BODY_LIMIT)),
    };
  });
  const envelope = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} };
  const request = (token: string | null, name: string, args: unknown, extra: Record<string, string> = {}, path = "/mcp") =>
    new Request(`${h.url}${path}`, {
      method: "POST",
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": name,
        ...extra,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name, arguments: args, _meta: envelope } }),
    });
  const read = async (r: Response) => ({ status: r.status, body: await r.json() });

  test("gives the SDK's answer for a success, a refusal, an out-of-scope call and a filtered tool", async () => {
    const scoped = await h.token("alice", { scopes: ["tasks"] });
    const cases: [string | null, string, unknown, string?][] = [
      [alice, "notes_get", { title: "Garden" }],
      [alice, "notes_get", { title: "Orchard" }],
      [alice, "notes_get", { title: 5 }],
      [scoped, "notes_get", { title: "Garden" }],
      [null, "notes_get", { title: "Garden" }],
      [alice, "notes_get", { title: "Garden" }, "/mcp?tools=tasks"],
      [alice, "notes_list", undefined],
    ];
    for (const [token, name, args, path] of cases) {
      const fast = await read(await fetch(request(token, name, args, {}, path)));
      const slow = await read(await handleMcp(h.rt, sdkOnly, request(token, name, args, {}, path), "127.0.0.1", false));
      expect(fast).toEqual(slow);
      expect(fast.body.result?.resultType ?? fast.body.error?.code).toBeDefined();
    }
  });
});

describe("over stdio", () => {
  const env = () => ({ ...h.env, HEARTH_LOG: "off", HEARTH_TOKEN: alice });

  test("a client pinned to 2026-07-28 lists and calls tools on `hearth mcp`", async () => {
    const client = pinned();
    await client.connect(new StdioV2({ command: process.execPath, args: [main, "mcp"], cwd: root, env: env(), stderr: "pipe" }));
    try {
      expect(client.getServerVersion()?.name).toBe("hearth");
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(toolNames());
      const got = (await client.callTool({ name: "notes_get", arguments: { title: "Garden" } })) as CallToolResult;
      expect(got.structuredContent).toEqual((await h.call("notes/get", { title: "Garden" }, { token: alice })).body);
    } finally {
      await client.close();
    }
  });

  test("a 2025-11-25 client still initializes, lists and calls on `hearth mcp`", async () => {
    const client = new ClientV1({ name: "hearth-test", version: "1.0.0" });
    await client.connect(new StdioV1({ command: process.execPath, args: [main, "mcp"], cwd: root, env: env(), stderr: "pipe" }));
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(toolNames());
      const got = (await client.callTool({ name: "notes_get", arguments: { title: "Garden" } })) as CallToolResult;
      expect(got.structuredContent).toEqual((await h.call("notes/get", { title: "Garden" }, { token: alice })).body);
    } finally {
      await client.close();
    }
  });
});
