// The answers a screen's page carries for the reads its view makes first (a
// screen's `reads`): on the page as JSON nothing in an answer can break out
// of, only when the person opens the page themselves, drawn at once without
// asking the API, and read once more as the live stream opens so a change
// made between the page and the stream still shows. The manifest's rules
// for `reads`.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { validateManifest } from "../../core/registry.ts";
import { read, T, write } from "../../core/sdk.ts";
import { get, signUp, type Signed } from "../auth/people.ts";
import { chromiumPresent, launchChromium } from "../browser.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { signedIn } from "./signed-in.ts";

let h: Hearth;
let erin: Signed;
let token: string;
let browser: Browser | undefined;

const NAVIGATION = { "sec-fetch-mode": "navigate", "sec-fetch-site": "none", "sec-fetch-dest": "document" };
const carried = (text: string) => {
  const m = /<script type="application\/json" id="first-reads">([^<]*)<\/script>/.exec(text);
  return m ? (JSON.parse(m[1]!) as Record<string, unknown>) : null;
};
const p2 = (n: number) => String(n).padStart(2, "0");
/** The 12th of next month: still to come, so events/list lists what is on it. */
function nextMonth(day: number): string {
  const now = new Date();
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, day));
  return `${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())}`;
}

beforeAll(async () => {
  h = await startHearth({ env: { HEARTH_SIGNUP: "open", HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" } });
  erin = await signUp(h, "erin");
  token = await h.token("erin");
  if (chromiumPresent) browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await h.stop();
});

test("the page carries the first reads' answers as JSON no title can end, only when the person opens it", async () => {
  const title = `Choir </script><script>alert(1)</script> <!--`;
  expect((await h.call("events/create", { title, when: `${nextMonth(12)}T19:30:00Z` }, { token, method: "POST" })).status).toBe(200);
  const opened = await get(h, "/my/events", { cookie: erin.cookie, ...NAVIGATION });
  expect(opened.status).toBe(200);
  expect(opened.text).not.toContain("<script>alert(1)");
  const answers = carried(opened.text)!;
  const list = answers['["events/list",{}]'] as { title: string }[];
  expect(list.map((e) => e.title)).toEqual([title]);
  // The same answer the API gives.
  expect(list).toEqual((await h.call("events/list", {}, { token })).body.result);
  // Each of Mail's two, with the arguments its view gives them; Tasks' first page as the view reads it.
  const mail = carried((await get(h, "/my/mail", { cookie: erin.cookie, ...NAVIGATION })).text)!;
  expect(Object.keys(mail).sort()).toEqual(['["mail/inbox",{"limit":100}]', '["mail/info",{}]']);
  expect(carried((await get(h, "/my/tasks", { cookie: erin.cookie, ...NAVIGATION })).text)).toEqual({ '["tasks/list",{"limit":1000}]': { items: [] } });
  // Another site making the browser load the page spends no read, and a page with no reads declared carries none.
  expect(carried((await get(h, "/my/events", { cookie: erin.cookie, "sec-fetch-mode": "no-cors", "sec-fetch-site": "cross-site" })).text)).toBeNull();
  expect(carried((await get(h, "/my/events", { cookie: erin.cookie })).text)).toBeNull();
  expect(carried((await get(h, "/my/recall", { cookie: erin.cookie, ...NAVIGATION })).text)).toBeNull();
});

test.skipIf(!chromiumPresent)("the calendar draws the page's answer without asking, and a change made before the live stream opens still shows", async () => {
  const { context, page, problems } = await signedIn(browser!, h.url, erin, { serviceWorkers: "block" });
  const asked: string[] = [];
  page.on("request", (r) => r.url().includes("/api/v1/") && asked.push(new URL(r.url()).pathname));
  // The live stream is held back until an event is made: the page's answer cannot have it.
  let letLive!: () => void;
  const held = new Promise<void>((r) => (letLive = r));
  await page.route("**/my/live", async (route) => {
    await held;
    await route.continue();
  });
  await page.goto(`${h.url}/my/events?date=${nextMonth(10)}`);
  await page.locator(`[data-day="${nextMonth(12)}"] .chip`).waitFor();
  expect(asked).toEqual([]);
  expect(await page.locator(".state.loading").count()).toBe(0);
  await h.call("events/create", { title: "Dentist", when: `${nextMonth(14)}T15:00:00Z` }, { token, method: "POST" });
  letLive();
  await page.locator(`[data-day="${nextMonth(14)}"] [data-event="Dentist"]`).waitFor();
  expect(asked).toContain("/api/v1/events/list");
  expect(problems).toEqual([]);
  await context.close();
});

test("a screen's reads name free read methods of its own plugin, with arguments as an object", () => {
  const methods = {
    list: read({ description: "Lists.", args: T.Object({}), access: "account", run: () => [] }),
    dear: read({ description: "Costs.", args: T.Object({}), access: "account", price: 2, run: () => [] }),
    add: write({ description: "Adds.", args: T.Object({}), access: "account", run: () => null }),
  };
  const base = { name: "demo", description: "A demo.", methods };
  const with_ = (reads: unknown, more: Record<string, unknown> = { module: "screens/demo.ts" }) => () =>
    validateManifest("demo/index.ts", { ...base, screens: { demo: { title: "Demo", ...more, reads } } });
  expect(with_([{ method: "list" }, { method: "list", args: { limit: 5 } }])).not.toThrow();
  expect(with_([{ method: "add" }])).toThrow("screens.demo.reads.0.method");
  expect(with_([{ method: "dear" }])).toThrow("free read method");
  expect(with_([{ method: "nothing" }])).toThrow("screens.demo.reads.0.method");
  expect(with_([{ method: "list", args: [1] }])).toThrow("screens.demo.reads.0.args");
  expect(with_({ method: "list" })).toThrow("screens.demo.reads");
  expect(with_([{ method: "list" }], { href: "/demo" })).toThrow("screens.demo.reads");
});
