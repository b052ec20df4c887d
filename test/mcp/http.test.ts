// MCP over Streamable HTTP at /mcp, driven by the SDK's own client against a running server.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { startSession } from "../../core/auth/sessions.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { mcpClient, rpc } from "./client.ts";

let h: Hearth;
let alice: string;
const clock = new TestClock();

beforeAll(async () => {
  h = await startHearth({ clock });
  alice = await h.token("alice");
});
afterAll(() => h.stop());

describe("the SDK client over Streamable HTTP", () => {
  test("initializes a session, lists every method as a tool, and calls through dispatch as the token's account", async () => {
    const c = await mcpClient(h.url, { token: alice });
    try {
      expect(c.transport.sessionId).toBeString();
      expect(c.client.getServerVersion()?.name).toBe("hearth");
      expect(c.client.getServerCapabilities()?.tools).toBeDefined();

      const { tools } = await c.client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(
        h.rt.registry
          .list()
          .map((e) => `${e.service}_${e.name}`)
          .sort(),
      );

      const added = await c.call("notes_add", { title: "Shopping", text: "eggs" });
      expect(added.isError).toBeUndefined();
      const http = await h.call("notes/get", { title: "Shopping" }, { token: alice });
      expect(http.status).toBe(200);
      expect(added.structuredContent).toEqual(http.body);

      const got = await c.call("notes_get", { title: "Shopping" });
      expect(got.structuredContent).toEqual(http.body);
      expect(got.content).toEqual([{ type: "text", text: JSON.stringify(http.body) }]);
    } finally {
      await c.close();
    }
  });

  test("a refusal is a tool error with HTTP's status, kind and message", async () => {
    const anon = await mcpClient(h.url);
    const c = await mcpClient(h.url, { token: alice });
    try {
      const noAccount = await anon.call("notes_get", { title: "Shopping" });
      const httpNoAccount = await h.call("notes/get", { title: "Shopping" });
      expect(httpNoAccount.status).toBe(401);
      expect(noAccount.isError).toBe(true);
      expect(noAccount.structuredContent).toEqual(httpNoAccount.body);

      const missing = await c.call("notes_get", { title: "never written" });
      expect(missing.isError).toBe(true);
      expect((missing.structuredContent as any).error).toMatchObject({ status: 404, kind: "not_found", message: 'no note titled "never written"' });

      const bad = await c.call("notes_get", { title: "" });
      const httpBad = await h.call("notes/get", { title: "" }, { token: alice, method: "POST" });
      expect(httpBad.status).toBe(400);
      expect(bad.structuredContent).toEqual(httpBad.body);
      expect((bad.structuredContent as any).error.field).toBe("title");

      const unknownArg = await c.call("notes_get", { title: "a", colour: "red" });
      expect((unknownArg.structuredContent as any).error).toMatchObject({ kind: "invalid_argument", field: "colour" });
      const parsed = JSON.parse((unknownArg.content as { text: string }[])[0].text);
      expect(parsed).toEqual(unknownArg.structuredContent);
    } finally {
      await anon.close();
      await c.close();
    }
  });

  test("an unknown tool is a protocol error, not a tool result", async () => {
    const c = await mcpClient(h.url, { token: alice });
    try {
      const e = await c.call("notes_nope", {}).catch((err) => err);
      expect(e).toBeInstanceOf(McpError);
      expect(e.code).toBe(-32602);
    } finally {
      await c.close();
    }
  });

  test("tools carry description with price, annotations, and price in _meta", async () => {
    const c = await mcpClient(h.url, { token: alice });
    try {
      const { tools } = await c.client.listTools();
      const byName = new Map(tools.map((t) => [t.name, t]));
      const get = byName.get("notes_get")!;
      expect(get.description).toContain("Reads one note by its title.");
      expect(get.description).toContain("Price: free.");
      expect(get.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: false });
      expect(get._meta).toMatchObject({ price: { credits: 0, usd: 0 }, access: "account" });
      expect(get.inputSchema).toMatchObject({ type: "object", required: ["title"], additionalProperties: false });
      expect(byName.get("notes_delete")!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
      // Adding a note under an existing title rewrites it: destructive. Making a task only adds.
      expect(byName.get("notes_add")!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
      expect(byName.get("tasks_create")!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, openWorldHint: false });
      // Sending outside, or answering with outside content, touches the open world.
      expect(byName.get("mail_send")!.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true });
      expect(byName.get("mail_send")!._meta).toMatchObject({ classes: ["outbound", "costs"] });
      expect(byName.get("mail_inbox")!.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: true });
      // The price each tool states is the one the HTTP price list states.
      const prices = await fetch(`${h.url}/api/v1/prices`).then(
        (r) => r.json() as Promise<{ result: { methods: { tool: string; credits: number | null; classes: string[] }[] } }>,
      );
      expect(prices.result.methods.length).toBe(tools.length);
      for (const listed of prices.result.methods) {
        const t = byName.get(listed.tool)!;
        const entry = h.rt.registry.list().find((e) => e.tool === listed.tool)!;
        expect(t.annotations?.openWorldHint).toBe(entry.def.openWorld === true || entry.classes.outbound || entry.classes.untrusted);
        expect(t.annotations?.destructiveHint).toBe(entry.def.kind === "write" && entry.classes.destructive);
        // The price list and the tool state the same classes.
        expect(t._meta?.classes).toEqual(listed.classes);
        if (listed.credits === null) expect(t._meta?.price).toEqual({ credits: null, varies: true });
        else {
          expect(t._meta?.price).toEqual({ credits: listed.credits, usd: listed.credits / 100 });
          if (listed.credits > 0) expect(t.description).toContain(`${listed.credits} credit`);
        }
      }
    } finally {
      await c.close();
    }
  });

  test("a token scoped to some services sees and calls only those", async () => {
    const scoped = await h.token("alice", { scopes: ["notes"] });
    const c = await mcpClient(h.url, { token: scoped });
    try {
      const { tools } = await c.client.listTools();
      expect(tools.length).toBeGreaterThan(0);
      expect(tools.every((t) => t.name.startsWith("notes_"))).toBe(true);
      const other = h.rt.registry.list().find((e) => e.service !== "notes")!;
      const out = await c.call(other.tool, {});
      const http = await h.call(other.path, {}, { token: scoped, method: "POST" });
      expect(http.status).toBe(403);
      expect(out.isError).toBe(true);
      expect(out.structuredContent).toEqual(http.body);
    } finally {
      await c.close();
    }
  });

  test("?tools= limits the tools to the named services, for listing and calling", async () => {
    const other = h.rt.registry.services().find((s) => s !== "notes")!;
    const c = await mcpClient(h.url, { token: alice, query: `?tools=notes,${other}` });
    try {
      const { tools } = await c.client.listTools();
      const expected = h.rt.registry.list().filter((e) => e.service === "notes" || e.service === other);
      expect(tools.map((t) => t.name).sort()).toEqual(expected.map((e) => e.tool).sort());
      const outside = h.rt.registry.list().find((e) => e.service !== "notes" && e.service !== other)!;
      const e = await c.call(outside.tool, {}).catch((err) => err);
      expect(e).toBeInstanceOf(McpError);
    } finally {
      await c.close();
    }
  });
});

describe("stateless requests and sessions", () => {
  test("a plain POST with tools/list answers without a session, as curl sends it", async () => {
    const r = await rpc(h.url, "tools/list");
    expect(r.status).toBe(200);
    expect(r.headers.get("mcp-session-id")).toBeNull();
    expect(r.body.result.tools.length).toBe(h.rt.registry.methods.size);
  });

  test("a plain POST tools/call runs as the Bearer token's account", async () => {
    const r = await rpc(h.url, "tools/call", { name: "notes_get", arguments: { title: "Shopping" } }, { authorization: `Bearer ${alice}` });
    expect(r.status).toBe(200);
    const http = await h.call("notes/get", { title: "Shopping" }, { token: alice });
    expect(r.body.result.structuredContent).toEqual(http.body);
  });

  test("a browser session is identified as over HTTP: its POSTs need the CSRF token", async () => {
    const account = (await h.rt.tokens.identify(alice, h.rt.clock.now().getTime())).account!;
    const { cookie, csrf } = await startSession(h.rt, new Request(h.url), account);
    const jar = { cookie: cookie.split(";")[0] };
    const params = { name: "notes_get", arguments: { title: "Shopping" } };
    const bare = await rpc(h.url, "tools/call", params, jar);
    expect(bare.status).toBe(403);
    expect(bare.body.error.data.error.kind).toBe("forbidden");
    const withCsrf = await rpc(h.url, "tools/call", params, { ...jar, "x-csrf-token": csrf });
    expect(withCsrf.status).toBe(200);
    expect(withCsrf.body.result.structuredContent).toEqual((await h.call("notes/get", { title: "Shopping" }, { token: alice })).body);
  });

  test("a bad token is refused at the door with 401", async () => {
    const r = await rpc(h.url, "tools/list", undefined, { authorization: "Bearer hth_not_a_token" });
    expect(r.status).toBe(401);
    expect(r.body.error.data.error.kind).toBe("unauthenticated");
  });

  test("a page on another origin may call with a token or as a stranger, but its session cookie identifies no one", async () => {
    const elsewhere = { origin: "https://elsewhere.example" };
    const foreign = await rpc(h.url, "tools/list", undefined, elsewhere);
    expect(foreign.status).toBe(200);
    expect(foreign.headers.get("access-control-allow-origin")).toBe("*");
    const params = { name: "notes_get", arguments: { title: "Shopping" } };
    const withToken = await rpc(h.url, "tools/call", params, { ...elsewhere, authorization: `Bearer ${alice}` });
    expect(withToken.body.result.structuredContent).toEqual((await h.call("notes/get", { title: "Shopping" }, { token: alice })).body);

    const account = (await h.rt.tokens.identify(alice, h.rt.clock.now().getTime())).account!;
    const { cookie, csrf } = await startSession(h.rt, new Request(h.url), account);
    const jar = { cookie: cookie.split(";")[0], "x-csrf-token": csrf };
    const own = await rpc(h.url, "tools/call", params, { ...jar, origin: h.url });
    expect(own.body.result.isError).toBeUndefined();
    const borrowed = await rpc(h.url, "tools/call", params, { ...jar, ...elsewhere });
    expect(borrowed.body.result.isError).toBe(true);
    expect(borrowed.body.result.structuredContent.error.kind).toBe("unauthenticated");
  });

  test("not JSON is a parse error", async () => {
    const res = await fetch(`${h.url}/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: "{nope" });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe(-32700);
  });

  test("an unknown session is 404, and a deleted one stops answering", async () => {
    const r = await rpc(h.url, "tools/list", undefined, { "mcp-session-id": "no-such-session" });
    expect(r.status).toBe(404);

    const c = await mcpClient(h.url, { token: alice });
    const sid = c.transport.sessionId!;
    await c.transport.terminateSession();
    const after = await rpc(h.url, "tools/list", undefined, { "mcp-session-id": sid, authorization: `Bearer ${alice}` });
    expect(after.status).toBe(404);
    await c.close();
  });

  test("a stream of server messages is offered within a session only", async () => {
    const stateless = await fetch(`${h.url}/mcp`, { headers: { accept: "text/event-stream" } });
    expect(stateless.status).toBe(405);
    await stateless.body?.cancel();

    const init = await rpc(h.url, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } });
    const sid = init.headers.get("mcp-session-id")!;
    expect(sid).toBeString();
    const headers = { accept: "text/event-stream", "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18" };
    const first = await fetch(`${h.url}/mcp`, { headers });
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("text/event-stream");
    // One stream per session, as the protocol says.
    const second = await fetch(`${h.url}/mcp`, { headers });
    expect(second.status).toBe(409);
    await second.body?.cancel();
    await first.body?.cancel();
    expect((await fetch(`${h.url}/mcp`, { method: "DELETE", headers: { "mcp-session-id": sid } })).status).toBe(200);
  });

  test("an idle session expires; each request is identified by its own headers", async () => {
    const c = await mcpClient(h.url, { token: alice });
    const sid = c.transport.sessionId!;
    const headers = { "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18" };
    // The session holds no identity: the same session without the token is a stranger.
    const asStranger = await rpc(h.url, "tools/call", { name: "notes_get", arguments: { title: "Shopping" } }, headers);
    expect(asStranger.body.result.structuredContent.error.kind).toBe("unauthenticated");

    clock.advance(2 * 60 * 60 * 1000);
    const stale = await rpc(h.url, "tools/list", undefined, { ...headers, authorization: `Bearer ${alice}` });
    expect(stale.status).toBe(404);
    await c.close();
  });
});

describe("the page", () => {
  test("a browser GET shows how to connect, with the tool list", async () => {
    const res = await fetch(`${h.url}/mcp`, { headers: { accept: "text/html" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    expect(html).toContain(`${h.url}/mcp`);
    expect(html).toContain("Claude Desktop");
    expect(html).toContain("Cursor");
    expect(html).toContain("hearth mcp");
    // Connectors that sign in with OAuth are given the address that asks them to.
    expect(html).toContain(`<code>${h.url}/mcp?signin</code>`);
    for (const e of h.rt.registry.list()) expect(html).toContain(`<code>${e.tool}</code>`);
  });

  test("the page honours ?tools=", async () => {
    const html = await (await fetch(`${h.url}/mcp?tools=notes`)).text();
    expect(html).toContain("<code>notes_get</code>");
    const other = h.rt.registry.list().find((e) => e.service !== "notes")!;
    expect(html).not.toContain(`<code>${other.tool}</code>`);
  });
});
