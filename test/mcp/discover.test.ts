// one store: discovery mode's three tools over /mcp and stdio; the tools they reach run on both stores in test/mcp (parity, tools)
// Discovery mode (?mode=discover, the Hearth-Tools-Mode header, `hearth mcp
// --mode discover`): three tools up front, and every other tool found,
// described and called through them with the same scope, price and answers.
import "./patient.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { creditsOf } from "../../core/mcp/tools.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { mcpClient, rpc } from "./client.ts";

const DISCOVERY = ["call_tool", "describe_tool", "search_tools"];
let h: Hearth;
let alice: string;

beforeAll(async () => {
  h = await startHearth();
  alice = await h.token("alice");
});
afterAll(() => h.stop());

const names = (tools: { name: string }[]) => tools.map((t) => t.name).sort();
const json = { accept: "application/json, text/event-stream", "content-type": "application/json" };

describe("over /mcp", () => {
  test("?mode=discover lists three tools; without it every method is listed", async () => {
    const full = await rpc(h.url, "tools/list", undefined, { ...json, authorization: `Bearer ${alice}` });
    const small = await rpc(h.url, "tools/list", undefined, { ...json, authorization: `Bearer ${alice}` }, "/mcp?mode=discover");
    expect(full.body.result.tools.length).toBe(h.rt.registry.list().length);
    expect(names(small.body.result.tools)).toEqual(DISCOVERY);
    // The point of the mode: the list a client loads up front is a small part of the full one.
    expect(JSON.stringify(small.body).length * 10).toBeLessThan(JSON.stringify(full.body).length);
  });

  test("a 2025-11-25 session finds, describes and calls a tool, with the answer a direct call gives", async () => {
    const c = await mcpClient(h.url, { token: alice, query: "?mode=discover" });
    const direct = await mcpClient(h.url, { token: alice });
    try {
      expect(names((await c.client.listTools()).tools)).toEqual(DISCOVERY);
      const found = await c.call("search_tools", { query: "add a note" });
      expect(found.isError).toBeUndefined();
      const hits = (found.structuredContent as any).result.tools as { name: string; price: unknown }[];
      expect(hits.slice(0, 3).map((t) => t.name)).toContain("notes_add");
      // A need named in a service's own description finds that service: the calendar is the events service.
      const calendar = ((await c.call("search_tools", { query: "what's on my calendar", limit: 3 })).structuredContent as any).result.tools;
      expect(calendar.map((t: { name: string }) => t.name.split("_")[0])).toEqual(["events", "events", "events"]);

      const described = await c.call("describe_tool", { name: "notes_add" });
      const listed = (await direct.client.listTools()).tools.find((t) => t.name === "notes_add")!;
      expect((described.structuredContent as any).result).toEqual(JSON.parse(JSON.stringify(listed)));

      const added = await c.call("call_tool", { name: "notes_add", arguments: { title: "Found", text: "through discovery" } });
      expect(added.isError).toBeUndefined();
      const http = await h.call("notes/get", { title: "Found" }, { token: alice });
      expect(http.status).toBe(200);
      expect((await c.call("call_tool", { name: "notes_get", arguments: { title: "Found" } })).structuredContent).toEqual(http.body);
      // A tool known by name is still called directly in this mode.
      expect((await c.call("notes_get", { title: "Found" })).structuredContent).toEqual(http.body);
    } finally {
      await c.close();
      await direct.close();
    }
  });

  test("a 2026-07-28 client chooses the mode with the header", async () => {
    const client = new ClientV2({ name: "hearth-test-2026", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await client.connect(
      new HttpV2(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${alice}`, "hearth-tools-mode": "discover" } } }),
    );
    try {
      expect(names((await client.listTools()).tools)).toEqual(DISCOVERY);
      const r = (await client.callTool({ name: "describe_tool", arguments: { name: "notes_get" } })) as CallToolResult;
      expect((r.structuredContent as any).result.inputSchema).toEqual(h.rt.registry.methods.get("notes/get")!.schema);
    } finally {
      await client.close();
    }
  });

  test("search and describe see only the token's scope and the endpoint's ?tools=; call_tool refuses out of scope as a direct call does", async () => {
    const scoped = await h.token("alice", { scopes: ["notes"] });
    const c = await mcpClient(h.url, { token: scoped, query: "?mode=discover" });
    const filtered = await mcpClient(h.url, { token: alice, query: "?mode=discover&tools=weather" });
    try {
      const hits = ((await c.call("search_tools", { query: "weather forecast tasks notes", limit: 50 })).structuredContent as any).result.tools;
      expect(hits.length).toBeGreaterThan(0);
      expect(hits.every((t: { name: string }) => t.name.startsWith("notes_"))).toBe(true);
      const hidden = await c.call("describe_tool", { name: "tasks_create" });
      expect(hidden.isError).toBe(true);
      expect((hidden.structuredContent as any).error).toMatchObject({ status: 404, kind: "not_found", field: "name" });

      const viaDiscovery = await c.call("call_tool", { name: "tasks_list", arguments: {} });
      const direct = await c.call("tasks_list", {});
      expect(viaDiscovery.isError).toBe(true);
      expect((viaDiscovery.structuredContent as any).error.status).toBe(403);
      expect(viaDiscovery.structuredContent).toEqual(direct.structuredContent);

      const weather = ((await filtered.call("search_tools", { query: "notes weather", limit: 50 })).structuredContent as any).result.tools;
      expect(weather.length).toBeGreaterThan(0);
      expect(weather.every((t: { name: string }) => t.name.startsWith("weather_"))).toBe(true);
      const outside = await filtered.call("call_tool", { name: "notes_list", arguments: {} });
      expect((outside.structuredContent as any).error).toMatchObject({ status: 404, field: "name" });
    } finally {
      await c.close();
      await filtered.close();
    }
  });

  test("a priced method called through call_tool costs what it costs called directly", async () => {
    const priced = h.rt.registry.methods.get("text/summarise")!;
    expect(creditsOf(h.rt, priced)).toBeGreaterThan(0);
    const args = { text: "A long day of rain ended in a bright evening." };
    const c = await mcpClient(h.url, { query: "?mode=discover" });
    try {
      const viaDiscovery = await c.call("call_tool", { name: priced.tool, arguments: args });
      const direct = await c.call(priced.tool, args);
      expect((direct.structuredContent as any).error).toMatchObject({ status: 402, kind: "payment_required" });
      expect(viaDiscovery.structuredContent).toEqual(direct.structuredContent);
    } finally {
      await c.close();
    }
  });

  test("bad input is refused with the field and the reason", async () => {
    const c = await mcpClient(h.url, { token: alice, query: "?mode=discover" });
    try {
      const cases: [string, Record<string, unknown>, string][] = [
        ["search_tools", {}, "query"],
        ["search_tools", { query: "notes", limit: 0 }, "limit"],
        ["search_tools", { query: "notes", sort: "name" }, "sort"],
        ["describe_tool", { name: 7 }, "name"],
        ["call_tool", { name: "notes_add", arguments: [1] }, "arguments"],
        ["call_tool", { name: "no_such_tool" }, "name"],
      ];
      for (const [tool, args, field] of cases) {
        const r = await c.call(tool, args);
        expect(r.isError).toBe(true);
        expect((r.structuredContent as any).error.field).toBe(field);
        expect((r.structuredContent as any).error.status).toBeLessThan(500);
      }
      // The tool's own validation stands behind call_tool, and nothing is written.
      const bad = await c.call("call_tool", { name: "notes_add", arguments: { text: "no title" } });
      expect((bad.structuredContent as any).error).toMatchObject({ status: 400, kind: "invalid_argument" });
    } finally {
      await c.close();
    }
    const r = await rpc(h.url, "tools/list", undefined, json, "/mcp?mode=everything");
    expect(r.status).toBe(400);
    expect(r.body.error.data.error).toMatchObject({ kind: "invalid_argument", field: "mode" });
  });
});

test("`hearth mcp --mode discover` lists the three tools and calls through them", async () => {
  const root = join(import.meta.dir, "..", "..");
  const client = new ClientV1({ name: "hearth-test", version: "1.0.0" });
  await client.connect(
    new StdioV1({
      command: process.execPath,
      args: [join(root, "core", "cli", "main.ts"), "mcp", "--mode", "discover"],
      cwd: root,
      env: { ...h.env, HEARTH_LOG: "off", HEARTH_TOKEN: alice },
      stderr: "pipe",
    }),
  );
  try {
    expect(names((await client.listTools()).tools)).toEqual(DISCOVERY);
    const r = (await client.callTool({ name: "call_tool", arguments: { name: "notes_list", arguments: {} } })) as CallToolResult;
    expect(r.structuredContent).toEqual((await h.call("notes/list", {}, { token: alice })).body);
  } finally {
    await client.close();
  }
});
