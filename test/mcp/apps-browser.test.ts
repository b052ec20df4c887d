// one store: MCP Apps views in a browser; charges and the apps' store run on both stores in test/pay and test/mcp/apps.test.ts
// MCP Apps views in a real browser: a host page the test serves, built on
// ext-apps' own AppBridge, frames the weather card and a hosted app read over
// /mcp, hands the card a tool result, and forwards the views' own tool calls
// to the instance over the test's MCP connection, as a host does. Those calls
// go through dispatch: the refresh is charged, the app's task is written.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { EXTENSION_ID, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/server";
import type { CallToolRequest, CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Browser, Page } from "playwright-core";
import { balanceOf } from "../../core/pay/ledger.ts";
import { settle } from "../../core/upstream/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { launchChromium } from "../browser.ts";
import { CHROMIUM } from "../prepare.ts";
import { json, recorded, startFixture } from "../upstream/fixture-server.ts";
import { mcpClient } from "./client.ts";

const present = existsSync(CHROMIUM);
if (!present) console.log(`skipping the MCP Apps browser test: ${CHROMIUM} is missing (bun test/prepare.ts installs it as root)`);

const UI = { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } };
const fixture = startFixture({ "/v1/forecast": () => json(recorded("open-meteo", "forecast.json")) });
const clock = new TestClock(new Date("2026-11-21T10:00:00Z").getTime());
let h: Hearth;
let token: string;
let mcp: Awaited<ReturnType<typeof mcpClient>>;
let browser: Browser;
let hostServer: ReturnType<typeof Bun.serve>;
/** Requests the browser made anywhere but the test's host page (there should be none: views carry everything). */
const outside: string[] = [];

const balance = async () => balanceOf(h.rt.store.rdb, (await h.row<{ id: string }>("SELECT id FROM accounts WHERE username = 'wendy'"))!.id);

beforeAll(async () => {
  if (!present) return;
  h = await startHearth({ clock, env: { HEARTH_METER_ACCOUNTS: "all", OPEN_METEO_URL: fixture.url, UPSTREAM_RETRY_MS: "1" } });
  token = await h.token("wendy");
  await h.grant("wendy", 10);
  mcp = await mcpClient(h.url, { token, capabilities: UI });

  const built = await Bun.build({ entrypoints: [join(import.meta.dir, "apps-host.ts")], target: "browser", minify: true });
  if (!built.success) throw new AggregateError(built.logs, "the test host did not build");
  const hostJs = await built.outputs[0].text();
  hostServer = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      if (new URL(req.url).pathname === "/host.js") return new Response(hostJs, { headers: { "content-type": "text/javascript" } });
      return new Response(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host</title><script type="module" src="/host.js"></script></head>
<body><iframe id="view" title="view" sandbox="allow-scripts" style="width:30rem;height:20rem"></iframe></body></html>`, { headers: { "content-type": "text/html" } });
    },
  });

  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await mcp?.close();
  hostServer?.stop(true);
  if (h) {
    await settle(h.rt);
    await h.stop();
  }
  fixture.stop();
});

async function hostPage(): Promise<Page> {
  const page = await browser.newPage();
  const own = `http://127.0.0.1:${hostServer.port}`;
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(own) || url.startsWith("about:")) return route.continue();
    outside.push(url);
    return route.abort();
  });
  // The host forwards a view's tools/call over its own MCP connection to the instance.
  await page.exposeFunction("hostCallTool", (params: CallToolRequest["params"]) => mcp.client.callTool(params));
  await page.goto(own);
  await page.waitForFunction(() => typeof (window as unknown as { openView?: unknown }).openView === "function");
  return page;
}

async function readView(uri: string): Promise<string> {
  const read = await mcp.client.readResource({ uri });
  return (read.contents[0] as { text: string }).text;
}

test.skipIf(!present)(
  "the weather card renders the tool result the host sends, and its refresh is a tool call charged through dispatch",
  async () => {
    const page = await hostPage();
    const args = { lat: 51.5012, lon: -0.1246 };
    const before = await balance();
    const result = (await mcp.client.callTool({ name: "weather_forecast", arguments: args })) as CallToolResult;
    expect(await balance()).toBe(before - 1);

    await page.evaluate((html) => (window as any).openView(html), await readView("ui://hearth/cards/weather"));
    await page.evaluate(([a, r]) => (window as any).showResult(a, r), [args, result] as const);
    const view = page.frameLocator("#view");
    await expect(view.locator("#title").textContent()).resolves.toBe("Weather");
    await expect(view.locator("#lead").textContent()).resolves.toBe("Now: overcast, 6°C, feels like 3°C.");
    await expect(view.locator("#lines li").count()).resolves.toBe(3);
    await expect(view.locator("#lines li").first().textContent()).resolves.toContain("Today");

    // Past the forecast's hour in cache (fresh, then served while it is revised), a refresh asks the provider again and is charged again.
    clock.advance(61 * 60_000);
    // An hour idle ends the host's MCP session too: it connects again, as a host does.
    await mcp.close();
    mcp = await mcpClient(h.url, { token, capabilities: UI });
    const hits = fixture.hits("/v1/forecast");
    const charged = await balance();
    await view.getByRole("button", { name: "Refresh" }).click();
    await page.waitForFunction(() => (window as any).toolCalls.length === 1);
    expect(await page.evaluate(() => (window as any).toolCalls)).toEqual(["weather_forecast"]);
    expect(fixture.hits("/v1/forecast")).toBe(hits + 1);
    expect(await balance()).toBe(charged - 1);
    await expect(view.locator("#lines li").count()).resolves.toBe(3);
    expect(outside).toEqual([]);
    await page.close();
  },
);

test.skipIf(!present)(
  "a hosted app's hearth.call is the host's tools/call, run as the connection's account, with the page's guard still in force",
  async () => {
    const page = await hostPage();
    const html = `<!doctype html><html><body><p id="out">waiting</p><script>
const out = document.getElementById("out");
document.body.dataset.rtc = typeof RTCPeerConnection;
hearth.call("tasks/create", { title: "written from the app" }).then((t) => { out.textContent = "made " + t.title; }, (e) => { out.textContent = "refused " + e.message; });
</script></body></html>`;
    const made = await h.call("apps/create", { name: "Task maker", slug: "task-maker", html }, { token });
    expect(made.status).toBe(200);

    await page.evaluate((v) => (window as any).openView(v), await readView("ui://hearth/apps/task-maker"));
    const view = page.frameLocator("#view");
    await page.waitForFunction(() => (window as any).toolCalls.length === 1);
    await expect(view.locator("#out").textContent()).resolves.toBe("made written from the app");
    expect(await page.evaluate(() => (window as any).toolCalls)).toEqual(["tasks_create"]);
    await expect(view.locator("body").getAttribute("data-rtc")).resolves.toBe("undefined");
    const tasks = await h.call("tasks/list", {}, { token });
    expect(tasks.body.result.map((t: { title: string }) => t.title)).toContain("written from the app");
    expect(outside).toEqual([]);
    await page.close();
  },
);

test.skipIf(!present)(
  "the Counter starter keeps its count in a conversation: hearth.store is the host's tools/call of the apps store methods, free, and the same store as its page's",
  async () => {
    const before = await balance();
    const page = await hostPage();
    const calls = () => page.evaluate(() => (window as any).toolCalls as string[]);
    await page.evaluate((v) => (window as any).openView(v), await readView("ui://hearth/apps/counter"));
    const view = page.frameLocator("#view");
    // The stored count is read first: nothing yet, so 0.
    await page.waitForFunction(() => (window as any).toolCalls.includes("apps_store_get"));
    await expect(view.locator("#count").textContent()).resolves.toBe("0");
    await view.getByRole("button", { name: "Plus one" }).click();
    await page.waitForFunction(() => (window as any).toolCalls.filter((n: string) => n === "apps_store_set").length === 1);
    await view.getByRole("button", { name: "Plus one" }).click();
    await page.waitForFunction(() => (window as any).toolCalls.filter((n: string) => n === "apps_store_set").length === 2);
    await expect(view.locator("#count").textContent()).resolves.toBe("2");
    expect(await calls()).toEqual(["apps_store_get", "apps_store_set", "apps_store_set"]);
    // Kept in wendy's store for the app, where the methods (and the app's page under /apps) read it.
    const kept = await h.call("apps/store_get", { slug: "counter", key: "count" }, { token });
    expect(kept.body).toEqual({ result: 2 });
    expect(await h.row("SELECT value FROM apps_store s JOIN accounts a ON a.id = s.account WHERE a.username = 'wendy' AND s.key = 'count'")).toEqual({ value: "2" });
    // Opened again in another conversation, the view shows the kept count.
    const again = await hostPage();
    await again.evaluate((v) => (window as any).openView(v), await readView("ui://hearth/apps/counter"));
    await again.waitForFunction(() => (window as any).toolCalls.includes("apps_store_get"));
    await expect(again.frameLocator("#view").locator("#count").textContent()).resolves.toBe("2");
    await again.close();
    // The store is free, as on the app's page: nothing was charged for what ran.
    expect(await balance()).toBe(before);
    expect(outside).toEqual([]);
    await page.close();
  },
);
