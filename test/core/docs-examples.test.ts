// docs/plugins.md's worked examples as an author would copy them: chores (a
// collection calendar apps sync), quotes (a screen) and rates (a collector on
// a schedule), each written from the docs' blocks into a folder, type-checked
// against the SDK in it, loaded as a drop-in from HEARTH_PLUGINS and used
// through HTTP: the API, CalDAV, the screen in Chromium, the scheduler's
// rounds against a loopback stand-in for the provider.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Browser } from "playwright-core";
import { writePgMigration, writeTsconfig } from "../../core/cli/plugin.ts";
import { schedulerOf } from "../../core/scheduler/index.ts";
import { signUp } from "../auth/people.ts";
import { chromiumPresent, everyLook, launchChromium } from "../browser.ts";
import { startHearth, storeEnv, TestClock, type Hearth } from "../harness.ts";
import { writeDocsExample } from "./docs-plugin.ts";

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});
const store = () => (process.env.HEARTH_TEST_DB === "pg" ? "pg" : "sqlite");

/** The docs' example in a temp folder, with its PostgreSQL migrations when the suite runs there. */
async function example(name: string): Promise<string> {
  const folder = writeDocsExample(name);
  made.push(dirname(folder));
  if ((await storeEnv()).HEARTH_DATABASE_URL) await writePgMigration(folder);
  return folder;
}

// A type check reads no store: the PostgreSQL pass would only run it again the same.
test.skipIf(process.env.HEARTH_TEST_DB === "pg")("each example type-checks against the SDK in its own folder, as an author's editor checks it (in the SQLite pass)", async () => {
  // The three folders side by side under one tsconfig: one compiler run for all.
  const all = mkdtempSync(join(tmpdir(), "hearth-docs-examples-"));
  made.push(all);
  for (const name of ["chores", "quotes", "rates"]) {
    const folder = writeDocsExample(name);
    made.push(dirname(folder));
    cpSync(folder, join(all, name), { recursive: true });
  }
  expect(writeTsconfig(all)).toBe(true);
  // On one thread: the same check, without tsc's parallel checkers each going through the core's types again.
  const p = Bun.spawn(["bun", join(import.meta.dir, "../../node_modules/typescript/bin/tsc"), "--noEmit", "--singleThreaded", "-p", all], { cwd: all, stdout: "pipe", stderr: "pipe" });
  const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
  expect(out).toBe("");
  expect(code).toBe(0);
});

describe("chores: a collection calendar apps sync", () => {
  let h: Hearth;
  beforeAll(async () => {
    h = await startHearth({ env: { HEARTH_PLUGINS: await example("chores") } });
  });
  afterAll(() => h?.stop());
  const basic = (token: string) => `Basic ${btoa(`alice:${token}`)}`;
  const vtodo = (uid: string, summary: string, status?: string) =>
    ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", "BEGIN:VTODO", `UID:${uid}`, "DTSTAMP:20260301T090000Z", `SUMMARY:${summary}`, ...(status ? [`STATUS:${status}`] : []), "END:VTODO", "END:VCALENDAR", ""].join("\r\n");

  test("a chore added over the API is listed to a client; one a client puts, ticks off and deletes goes through the plugin's methods", async () => {
    const token = await h.token("alice");
    const auth = { authorization: basic(token) };
    const base = `${h.url}/dav/calendars/alice/chores/`;
    expect((await h.call("chores/add", { title: "Water the plants" }, { token })).status).toBe(200);

    const listed = await fetch(base, { method: "PROPFIND", headers: { ...auth, depth: "1" } });
    expect(listed.status).toBe(207);
    const hrefs = [...(await listed.text()).matchAll(/<[^>]*href>([^<]+\.ics)<\//g)].map((m) => m[1]);
    expect(hrefs).toHaveLength(1);
    const first = await fetch(new URL(hrefs[0], h.url), { headers: auth });
    expect(first.status).toBe(200);
    expect(await first.text()).toContain("SUMMARY:Water the plants\r\nSTATUS:NEEDS-ACTION");

    const put = await fetch(`${base}bins.ics`, { method: "PUT", headers: { ...auth, "content-type": "text/calendar", "if-none-match": "*" }, body: vtodo("bins-1", "Put the bins out") });
    expect(put.status).toBe(201);
    const list = async () => (await h.call("chores/list", {}, { token })).body.result as { id: string; title: string; done: boolean }[];
    expect((await list()).map((c) => [c.title, c.done])).toEqual([
      ["Put the bins out", false],
      ["Water the plants", false],
    ]);

    const ticked = await fetch(`${base}bins.ics`, { method: "PUT", headers: { ...auth, "content-type": "text/calendar", "if-match": put.headers.get("etag")! }, body: vtodo("bins-1", "Put the bins out", "COMPLETED") });
    expect(ticked.status).toBe(204);
    expect((await list()).find((c) => c.title === "Put the bins out")?.done).toBe(true);
    const back = await fetch(`${base}bins.ics`, { headers: auth });
    expect(await back.text()).toContain("UID:bins-1");

    // What the plugin's own method refuses, the client is told, and nothing is kept.
    const blank = await fetch(`${base}blank.ics`, { method: "PUT", headers: { ...auth, "content-type": "text/calendar" }, body: vtodo("blank-1", "") });
    expect(blank.status).toBeGreaterThanOrEqual(400);
    expect(blank.status).toBeLessThan(500);
    expect(await list()).toHaveLength(2);

    expect((await fetch(`${base}bins.ics`, { method: "DELETE", headers: auth })).status).toBe(204);
    expect((await list()).map((c) => c.title)).toEqual(["Water the plants"]);
  });
});

describe("quotes: a plugin with a screen", () => {
  let h: Hearth;
  let browser: Browser | undefined;
  beforeAll(async () => {
    h = await startHearth({ env: { HEARTH_PLUGINS: await example("quotes"), HEARTH_SIGNUP: "open", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" } });
  });
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  test("its screen is served at /my/quotes and named in the header, for the signed-in person only", async () => {
    const ada = await signUp(h, "ada");
    const page = await fetch(`${h.url}/my/quotes`, { headers: { cookie: ada.cookie } });
    expect(page.status).toBe(200);
    const body = await page.text();
    expect(body).toContain('href="/my/quotes"');
    const script = /<script[^>]+src="([^"]+)"/g;
    const sources = [...body.matchAll(script)].map((m) => m[1]);
    expect(sources.length).toBeGreaterThan(0);
    for (const src of sources) expect((await fetch(new URL(src, h.url), { headers: { cookie: ada.cookie } })).status).toBe(200);
    const away = await fetch(`${h.url}/my/quotes`, { redirect: "manual" });
    expect(away.status).toBe(303);
    expect(away.headers.get("location")).toStartWith("/signin");
  });

  test.skipIf(!chromiumPresent)("a person keeps a quote and removes it on the screen, which passes axe in light and dark at 1280 and 390 px", async () => {
    const bea = await signUp(h, "bea");
    browser = await launchChromium();
    const context = await browser.newContext({ bypassCSP: true });
    const [name, value] = bea.cookie.split("=");
    await context.addCookies([{ name, value, url: h.url }]);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(String(e)));
    await page.goto(`${h.url}/my/quotes`);
    await page.getByText("No quotes yet").waitFor();
    await page.getByLabel("Quote", { exact: true }).fill("Simplicity is prerequisite for reliability.");
    await page.getByLabel("Who said it").fill("Edsger Dijkstra");
    await page.getByRole("button", { name: "Keep it" }).click();
    await page.getByText("“Simplicity is prerequisite for reliability.”").waitFor();
    expect((await h.call("quotes/list", {}, { token: await h.token("bea") })).body.result).toMatchObject([{ text: "Simplicity is prerequisite for reliability.", who: "Edsger Dijkstra" }]);
    await h.call("quotes/add", { text: "Make it work, make it right, make it fast.", who: "Kent Beck" }, { token: await h.token("bea") });
    // Kept from another client: the screen hears of the write and lists it without a reload.
    await page.getByText("“Make it work, make it right, make it fast.”").waitFor();

    const shots = join(import.meta.dir, "..", "artifacts", "sdk");
    mkdirSync(shots, { recursive: true });
    const found = await everyLook(page, h.url, [{ name: "docs-example-quotes", path: "/my/quotes", ready: (p) => p.getByText("“Make it work, make it right, make it fast.”").waitFor() }], { shots, suffix: `-${store()}` });
    expect(found).toEqual({});

    await page.getByRole("button", { name: "Remove “Make it work, make it right, make it fast.”" }).click();
    await page.getByText("Quote removed").waitFor();
    await page.getByText("“Make it work, make it right, make it fast.”").waitFor({ state: "detached" });
    expect(problems).toEqual([]);
  });
});

describe("rates: a collector on a schedule", () => {
  let h: Hearth;
  let answer: () => Response;
  const asked: string[] = [];
  const fixture = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      asked.push(new URL(req.url).search);
      return answer();
    },
  });
  // Frankfurter's own format (GET /latest?from=EUR&to=…).
  const day = (date: string, usd: number) => () => Response.json({ amount: 1.0, base: "EUR", date, rates: { GBP: 0.8412, USD: usd } });
  const clock = new TestClock(Date.parse("2026-06-01T09:30:00Z"));
  beforeAll(async () => {
    answer = day("2026-05-29", 1.1368);
    h = await startHearth({ clock, env: { HEARTH_PLUGINS: await example("rates"), HEARTH_COLLECTORS: "on", FRANKFURTER_URL: `http://127.0.0.1:${fixture.port}`, RATES_TO: "USD,GBP", UPSTREAM_RETRY_MS: "0" } });
  });
  afterAll(async () => {
    await h?.stop();
    fixture.stop(true);
  });

  test("nothing is read until its first firing; each round keeps the day's rates, and a failed one is told as stale", async () => {
    const latest = async () => (await h.call("rates/latest", {})).body.result;
    expect(await latest()).toMatchObject({ base: "EUR", day: null, rates: {}, stale: true, last_success: null });
    expect(asked).toEqual([]);

    clock.set("2026-06-01T10:00:00Z");
    await schedulerOf(h.rt).runDue();
    expect(asked).toEqual(["?from=EUR&to=USD,GBP"]);
    expect(await latest()).toMatchObject({ day: "2026-05-29", rates: { GBP: 0.8412, USD: 1.1368 }, stale: false, last_success: "2026-06-01T10:00:00.000Z", error: null });

    answer = day("2026-06-01", 1.14);
    clock.set("2026-06-01T11:00:00Z");
    await schedulerOf(h.rt).runDue();
    expect(await latest()).toMatchObject({ day: "2026-06-01", rates: { USD: 1.14 }, stale: false });

    answer = () => new Response("down for maintenance", { status: 500 });
    clock.set("2026-06-01T12:00:00Z");
    await schedulerOf(h.rt).runDue();
    const failed = await latest();
    expect(failed).toMatchObject({ day: "2026-06-01", rates: { USD: 1.14 }, stale: true, last_success: "2026-06-01T11:00:00.000Z" });
    expect(failed.error).toBeString();
  });
});
