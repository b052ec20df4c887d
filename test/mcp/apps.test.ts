// one store: the MCP Apps extension's wire shapes; the apps it links run on both stores in test/apps (apps.test.ts, hosting.test.ts), and each card's data in its own service's tests
// MCP Apps over /mcp with the SDK's own client: a client that declares the
// extension gets the home cards and the hosted apps as ui:// views linked
// from tools; one that does not sees the tools as they always were.
import "./patient.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EXTENSION_ID, RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from "@modelcontextprotocol/ext-apps/server";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { join } from "node:path";
import { balanceOf } from "../../core/pay/ledger.ts";
import { settle } from "../../core/upstream/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { json, recorded, startFixture } from "../upstream/fixture-server.ts";
import { mcpClient, rpc } from "./client.ts";

const UI = { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } };
const fixture = startFixture({ "/v1/forecast": () => json(recorded("open-meteo", "forecast.json")) });
const clock = new TestClock(new Date("2026-11-21T10:00:00Z").getTime());
let h: Hearth;
let alice: string;
let bob: string;
const balance = async (name: string) => balanceOf(h.rt.store.rdb, (await h.row<{ id: string }>("SELECT id FROM accounts WHERE username = ?", name))!.id);

beforeAll(async () => {
  h = await startHearth({ clock, env: { HEARTH_METER_ACCOUNTS: "all", OPEN_METEO_URL: fixture.url, UPSTREAM_RETRY_MS: "1" } });
  alice = await h.token("alice");
  bob = await h.token("bob");
  await h.grant("alice", 20);
  await h.call("apps/create", { name: "Counter", slug: "tiny-counter", html: "<!doctype html><html><body><p id=n>0</p><script>document.getElementById('n').textContent = '1'</script></body></html>" }, { token: alice });
  await h.call("apps/create", { name: "Paid", slug: "paid", price: 5, html: "<!doctype html><html><body>secret page</body></html>" }, { token: alice });
});
afterAll(async () => {
  await settle(h.rt);
  await h.stop();
  fixture.stop();
});

const uiOf = (t: Tool | undefined) => (t?._meta as { ui?: { resourceUri?: string } } | undefined)?.ui?.resourceUri;

describe("a client that renders MCP Apps", () => {
  test("sees the cards and its own and the instance's hosted apps as ui:// resources, and the tools linked to them", async () => {
    const c = await mcpClient(h.url, { token: alice, capabilities: UI });
    try {
      expect(c.client.getServerCapabilities()?.resources).toBeDefined();
      const { resources } = await c.client.listResources();
      const uris = resources.map((r) => r.uri);
      expect(uris).toEqual(
        expect.arrayContaining(["ui://hearth/cards/weather", "ui://hearth/cards/events", "ui://hearth/cards/tasks", "ui://hearth/apps/tiny-counter", "ui://hearth/apps/paid", "ui://hearth/apps/counter"]),
      );
      for (const r of resources) expect(r.mimeType).toBe(RESOURCE_MIME_TYPE);

      const { tools } = await c.client.listTools();
      const byName = new Map(tools.map((t) => [t.name, t]));
      expect(uiOf(byName.get("weather_forecast"))).toBe("ui://hearth/cards/weather");
      expect(byName.get("weather_forecast")?._meta?.[RESOURCE_URI_META_KEY]).toBe("ui://hearth/cards/weather");
      expect(uiOf(byName.get("events_list"))).toBe("ui://hearth/cards/events");
      expect(uiOf(byName.get("tasks_list"))).toBe("ui://hearth/cards/tasks");
      expect(uiOf(byName.get("apps-tiny-counter"))).toBe("ui://hearth/apps/tiny-counter");
      expect(uiOf(byName.get("apps-counter"))).toBe("ui://hearth/apps/counter");
      expect(uiOf(byName.get("notes_add"))).toBeUndefined();
    } finally {
      await c.close();
    }
  });

  test("reads a card as an MCP App page with no network in its CSP, in the meta element and in _meta.ui", async () => {
    const c = await mcpClient(h.url, { capabilities: UI });
    try {
      const read = await c.client.readResource({ uri: "ui://hearth/cards/weather" });
      const [content] = read.contents as { uri: string; mimeType: string; text: string; _meta: any }[];
      expect(content.mimeType).toBe("text/html;profile=mcp-app");
      expect(content._meta.ui.csp).toEqual({ connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] });
      const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(content.text)?.[1];
      expect(meta).toContain("default-src 'none'");
      expect(meta).toContain("connect-src 'none'");
      // The package's own App class is in the page, not fetched from anywhere.
      expect(content.text).toContain("const McpApps = (() => {");
      expect(content.text).not.toMatch(/<script[^>]+src=/);
    } finally {
      await c.close();
    }
  });

  test("reads a hosted app with its page's CSP and guard in front of what it wrote", async () => {
    const c = await mcpClient(h.url, { token: alice, capabilities: UI });
    try {
      const read = await c.client.readResource({ uri: "ui://hearth/apps/tiny-counter" });
      const [content] = read.contents as { mimeType: string; text: string }[];
      expect(content.mimeType).toBe(RESOURCE_MIME_TYPE);
      const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(content.text)?.[1];
      expect(csp).toContain("connect-src 'none'");
      expect(csp).toContain("webrtc 'block'");
      expect(content.text.indexOf("RTCPeerConnection")).toBeLessThan(content.text.indexOf("<p id=n>"));
      expect(content.text.startsWith("<!doctype html>")).toBe(true);

      await expect(c.client.readResource({ uri: "ui://hearth/apps/none" })).rejects.toMatchObject({ code: -32002 });
    } finally {
      await c.close();
    }
  });

  test("someone else's app is not opened here, where its calls would not ask first; the instance's are", async () => {
    const c = await mcpClient(h.url, { token: bob, capabilities: UI });
    try {
      const uris = (await c.client.listResources()).resources.map((r) => r.uri);
      expect(uris).toContain("ui://hearth/apps/counter");
      expect(uris).not.toContain("ui://hearth/apps/tiny-counter");
      expect(uris).not.toContain("ui://hearth/apps/paid");
      const names = (await c.client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("apps-counter");
      expect(names).not.toContain("apps-tiny-counter");
      await expect(c.client.readResource({ uri: "ui://hearth/apps/tiny-counter" })).rejects.toThrow(/only your own apps and the instance's open here/);
      await expect(c.client.readResource({ uri: "ui://hearth/apps/paid" })).rejects.toThrow(/fork it/);
      await expect(c.call("apps-tiny-counter")).rejects.toThrow(/no tool "apps-tiny-counter"/);
      const starter = await c.client.readResource({ uri: "ui://hearth/apps/counter" });
      expect((starter.contents[0] as { text: string }).text).toContain("RTCPeerConnection");

      // A priced app opens free for its owner, as at its page.
      const owner = await mcpClient(h.url, { token: alice, capabilities: UI });
      try {
        const read = await owner.client.readResource({ uri: "ui://hearth/apps/paid" });
        expect((read.contents[0] as { text: string }).text).toContain("secret page");
      } finally {
        await owner.close();
      }
    } finally {
      await c.close();
    }
  });

  test("a linked tool answers as over HTTP, charged the same, with the card's lines for its view", async () => {
    const c = await mcpClient(h.url, { token: alice, capabilities: UI });
    try {
      const before = await balance("alice");
      const r = await c.call("weather_forecast", { lat: 51.5012, lon: -0.1246 });
      expect(r.isError).toBeUndefined();
      expect(await balance("alice")).toBe(before - 1);
      const http = await h.call("weather/forecast", { lat: 51.5012, lon: -0.1246 }, { token: alice });
      expect((r.structuredContent as any).result.current).toEqual(http.body.result.current);
      const card = (r._meta as any)["hearth/card"];
      expect(card.title).toBe("Weather");
      expect(card.lead).toBe("Now: overcast, 6°C, feels like 3°C.");
      expect(card.lines[0].text).toBe("Today");
      expect(card.lines).toHaveLength(3);
    } finally {
      await c.close();
    }
  });

  test("the events and tasks cards get their lines from the same answers the home screen reads", async () => {
    await h.call("tasks/create", { title: "Buy milk", due: "2026-11-22 10:00" }, { token: alice });
    await h.call("events/create", { title: "Dentist", when: "2026-11-21T15:00:00+00:00" }, { token: alice });
    const c = await mcpClient(h.url, { token: alice, capabilities: UI });
    try {
      const tasks = (await c.call("tasks_list"))._meta as any;
      expect(tasks["hearth/card"]).toEqual({ title: "Open tasks", lead: null, lines: [{ text: "Buy milk", detail: "due Sun 22 Nov, 10:00 UTC" }] });
      const events = (await c.call("events_list"))._meta as any;
      expect(events["hearth/card"].lines).toEqual([{ text: "Dentist", detail: "Sat 21 Nov, 15:00 UTC" }]);
    } finally {
      await c.close();
    }
  });

  test("an app's own tool runs apps/read through dispatch and gives its details without the page", async () => {
    const c = await mcpClient(h.url, { token: alice, capabilities: UI });
    try {
      const r = await c.call("apps-tiny-counter");
      expect(r.isError).toBeUndefined();
      const result = (r.structuredContent as any).result;
      expect(result).toMatchObject({ slug: "tiny-counter", name: "Counter", owner: "alice", mine: true });
      expect(result.html).toBeUndefined();
      const http = await h.call("apps/read", { slug: "tiny-counter" }, { token: alice });
      const { html: _page, ...details } = http.body.result;
      expect(result).toEqual(details);
      // It takes no arguments: one sent is refused by name, as any method refuses it; its slug is its own.
      const odd = await c.call("apps-tiny-counter", { colour: "red" });
      expect(odd.isError).toBe(true);
      expect((odd.structuredContent as any).error).toMatchObject({ status: 400, kind: "invalid_argument", field: "colour" });
      const other = await c.call("apps-tiny-counter", { slug: "paid" });
      expect((other.structuredContent as any).result.slug).toBe("tiny-counter");
    } finally {
      await c.close();
    }
  });

  test("the apps store methods keep one store per app and person, free, refusing bad input by field and other scopes", async () => {
    const c = await mcpClient(h.url, { token: alice, capabilities: UI });
    const pinned = new ClientV2({ name: "hearth-test-2026", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await pinned.connect(new HttpV2(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${bob}` } } }));
    const before = await balance("alice");
    try {
      expect((await c.call("apps_store_get", { slug: "counter", key: "count" })).structuredContent).toEqual({ result: null });
      expect((await c.call("apps_store_set", { slug: "counter", key: "count", value: 7 })).structuredContent).toEqual({ result: { key: "count" } });
      expect((await c.call("apps_store_set", { slug: "counter", key: "list", value: [1, { a: "b" }] })).isError).toBeUndefined();
      expect((await c.call("apps_store_get", { slug: "counter", key: "list" })).structuredContent).toEqual({ result: [1, { a: "b" }] });
      expect((await c.call("apps_store_keys", { slug: "counter" })).structuredContent).toEqual({ result: ["count", "list"] });
      expect((await c.call("apps_store_keys", { slug: "counter", prefix: "li" })).structuredContent).toEqual({ result: ["list"] });
      // Bob's store for the same app is his own, over the other era too.
      const bobs = (await pinned.callTool({ name: "apps_store_get", arguments: { slug: "counter", key: "count" } })) as { structuredContent?: unknown };
      expect(bobs.structuredContent).toEqual({ result: null });
      expect((await c.call("apps_store_remove", { slug: "counter", key: "list" })).isError).toBeUndefined();
      expect((await c.call("apps_store_keys", { slug: "counter" })).structuredContent).toEqual({ result: ["count"] });
      for (const [args, status, field] of [
        [{ slug: "counter", key: "" }, 400, "key"],
        [{ slug: "counter" }, 400, "key"],
        [{ slug: "no-such-app", key: "k" }, 404, undefined],
      ] as const) {
        const r = await c.call("apps_store_get", args);
        expect(r.isError).toBe(true);
        expect((r.structuredContent as any).error).toMatchObject({ status, ...(field ? { field } : {}) });
      }
      const big = await c.call("apps_store_set", { slug: "counter", key: "big", value: "x".repeat(70 * 1024) });
      expect((big.structuredContent as any).error).toMatchObject({ status: 413, field: "value" });
      expect((await c.call("apps_store_get", { slug: "counter", key: "big" })).structuredContent).toEqual({ result: null });
      const tasksOnly = await h.token("alice", { scopes: ["tasks"] });
      const scoped = await mcpClient(h.url, { token: tasksOnly });
      try {
        const r = await scoped.call("apps_store_get", { slug: "counter", key: "count" });
        expect((r.structuredContent as any).error).toMatchObject({ status: 403, kind: "forbidden" });
      } finally {
        await scoped.close();
      }
      expect(await balance("alice")).toBe(before);
    } finally {
      await c.close();
      await pinned.close();
    }
  });

  test("a token limited to some services sees only their views", async () => {
    const tasksOnly = await h.token("bob", { scopes: ["tasks"] });
    const c = await mcpClient(h.url, { token: tasksOnly, capabilities: UI });
    try {
      const { resources } = await c.client.listResources();
      expect(resources.map((r) => r.uri)).toEqual(["ui://hearth/cards/tasks"]);
      await expect(c.client.readResource({ uri: "ui://hearth/cards/weather" })).rejects.toThrow(/no resource/);
      await expect(c.call("apps-counter")).rejects.toThrow(/no tool/);
    } finally {
      await c.close();
    }
  });

  test("a stateless request declares the extension in its own _meta, as the 2026-07-28 protocol carries capabilities", async () => {
    const headers = { authorization: `Bearer ${bob}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
    const meta = { "io.modelcontextprotocol/clientCapabilities": UI };
    const linked = await rpc(h.url, "tools/list", { _meta: meta }, headers);
    expect(uiOf(linked.body.result.tools.find((t: Tool) => t.name === "weather_forecast"))).toBe("ui://hearth/cards/weather");
    const plain = await rpc(h.url, "tools/list", undefined, headers);
    expect(uiOf(plain.body.result.tools.find((t: Tool) => t.name === "weather_forecast"))).toBeUndefined();
    const listed = await rpc(h.url, "resources/list", { _meta: meta }, headers);
    expect(listed.body.result.resources.map((r: { uri: string }) => r.uri)).toContain("ui://hearth/cards/weather");
  });
});

describe("in the 2026-07-28 era", () => {
  test("a pinned SDK 2.x client declaring the extension gets the same views and links, over /mcp and over stdio", async () => {
    const pinned = () => new ClientV2({ name: "hearth-apps-2026", version: "1.0.0" }, { capabilities: UI, versionNegotiation: { mode: { pin: "2026-07-28" } } });
    const check = async (client: ClientV2) => {
      const { tools } = await client.listTools();
      expect(uiOf(tools.find((t) => t.name === "weather_forecast") as Tool | undefined)).toBe("ui://hearth/cards/weather");
      const { resources } = await client.listResources();
      expect(resources.map((r) => r.uri)).toContain("ui://hearth/cards/weather");
      const read = await client.readResource({ uri: "ui://hearth/cards/weather" });
      expect(read.contents[0].mimeType).toBe(RESOURCE_MIME_TYPE);
    };
    const http = pinned();
    await http.connect(new HttpV2(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${bob}` } } }));
    try {
      await check(http);
    } finally {
      await http.close();
    }
    const stdio = pinned();
    await stdio.connect(new StdioV2({ command: process.execPath, args: [join(import.meta.dir, "..", "..", "core", "cli", "main.ts"), "mcp"], env: { ...process.env, ...h.env, HEARTH_TOKEN: bob, HEARTH_LOG: "off", HEARTH_COLLECTORS: "off" } as Record<string, string> }));
    try {
      await check(stdio);
    } finally {
      await stdio.close();
    }
  });
});

describe("a client that does not", () => {
  test("sees the tools as before: no links, no views, no tools of their own", async () => {
    const c = await mcpClient(h.url, { token: bob });
    const ui = await mcpClient(h.url, { token: bob, capabilities: UI });
    try {
      const { tools } = await c.client.listTools();
      for (const t of tools) {
        expect(uiOf(t)).toBeUndefined();
        expect(t._meta?.[RESOURCE_URI_META_KEY]).toBeUndefined();
      }
      expect(tools.map((t) => t.name).sort()).toEqual(
        h.rt.registry
          .list()
          .map((e) => e.tool)
          .sort(),
      );
      expect((await c.client.listResources()).resources).toEqual([]);
      await expect(c.call("apps-counter")).rejects.toThrow(/no tool/);
      const r = await c.call("tasks_list");
      expect(r._meta?.["hearth/card"]).toBeUndefined();

      // A client naming the extension without the MCP App MIME type does not render these either.
      const other = await mcpClient(h.url, { token: bob, capabilities: { extensions: { [EXTENSION_ID]: { mimeTypes: ["text/html"] } } } });
      try {
        expect((await other.client.listTools()).tools.some((t) => uiOf(t))).toBe(false);
      } finally {
        await other.close();
      }
      // The same tools otherwise, in the same order.
      const linked = (await ui.client.listTools()).tools.filter((t) => !t.name.startsWith("apps-"));
      expect(linked.map((t) => t.name)).toEqual(tools.map((t) => t.name));
    } finally {
      await c.close();
      await ui.close();
    }
  });
});
