// one store: the Calendar screen's look; its methods run on both stores in test/events
// The Calendar's month, week and day as a person sees them, with events of
// every kind (one-off, weekly, hourly, one that runs a prompt), in light and
// dark at a desktop's and a phone's width: each passes axe and is left in
// test/artifacts/calendar/ to be looked at. And the page's first draw, made
// before its date formatters exist, says what they say.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext } from "playwright-core";
import { startSession } from "../../core/auth/sessions.ts";
import { ensureAccount } from "../../core/auth/tokens.ts";
import { chromiumPresent, everyLook, type Screen } from "../browser.ts";
import { personAndBrowser } from "./signed-in.ts";
import { startHearth, type Hearth } from "../harness.ts";

const SHOTS = join(import.meta.dir, "..", "artifacts", "calendar");
const ZONE = "Europe/Paris";

let h: Hearth;
let browser: Browser;
let token: string;
let cookie: { name: string; value: string; url: string };

beforeAll(async () => {
  if (!chromiumPresent) return;
  mkdirSync(SHOTS, { recursive: true });
  ({ h, token, cookie, browser } = await personAndBrowser("cleo"));
});
afterAll(async () => {
  await browser?.close();
  await h?.stop();
});

async function signedIn(o: { locale?: string; bypassCSP?: boolean } = {}): Promise<BrowserContext> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: ZONE, locale: o.locale ?? "en-GB", bypassCSP: o.bypassCSP });
  await ctx.addCookies([cookie]);
  return ctx;
}

const p2 = (n: number) => String(n).padStart(2, "0");
/** A day of next month, "2026-12-12": every day of it is still to come. */
function nextMonth(day: number): string {
  const now = new Date();
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, day));
  return `${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())}`;
}

test.skipIf(!chromiumPresent)("the month, week and day pass axe in light and dark at both widths", async () => {
  const made = [
    { title: "Dentist", when: `${nextMonth(9)}T08:05:00+01:00`, minutes: 45 },
    { title: "Standup", when: `${nextMonth(2)}T09:30:00+01:00`, repeat: "weekly" },
    { title: "Water the plants", when: `${nextMonth(3)}T18:00:00+01:00`, repeat: "daily" },
    { title: "Check the mail", when: `${nextMonth(10)}T07:15:00+01:00`, repeat: "hourly" },
    { title: "Summarise the week", when: `${nextMonth(13)}T17:45:00+01:00`, prompt: "What happened this week?" },
    { title: "Dinner with Ada and her brother from Lyon", when: `${nextMonth(10)}T20:00:00+01:00` },
  ];
  for (const e of made) expect((await h.call("events/create", e, { token })).status).toBe(200);
  const ctx = await signedIn({ bypassCSP: true });
  const screen = (name: string, path: string, ready: string): Screen => ({ name, path, ready: (p) => p.locator(ready).first().waitFor() });
  const found = await everyLook(
    await ctx.newPage(),
    h.url,
    [
      screen("month", `/my/events?date=${nextMonth(10)}`, '.month [data-event="Dentist"]'),
      screen("week", `/my/events?view=week&date=${nextMonth(10)}`, '.week [data-event="Dentist"]'),
      screen("day", `/my/events?view=day&date=${nextMonth(10)}`, '.dayview [data-event="Check the mail"]'),
    ],
    { shots: SHOTS, fullPage: true },
  );
  await ctx.close();
  expect(found).toEqual({});
});

/** Set before the page runs: how many date formatters the page's own thread made before the view first drew, and the worker's answer. */
function watchDates() {
  const w = window as unknown as { __made: number; __beforeDraw?: number; __checked?: string[] };
  w.__made = 0;
  const Made = Intl.DateTimeFormat;
  const counting = function (this: unknown, ...a: ConstructorParameters<typeof Intl.DateTimeFormat>) {
    w.__made++;
    return new Made(...a);
  } as unknown as typeof Intl.DateTimeFormat;
  Object.defineProperty(counting, "prototype", { value: Made.prototype });
  Intl.DateTimeFormat = counting;
  const Real = window.Worker;
  window.Worker = function (url: string | URL, o?: WorkerOptions) {
    const worker = new Real(url, o);
    worker.addEventListener("message", (e) => (w.__checked = e.data));
    return worker;
  } as unknown as typeof Worker;
  const seen = new MutationObserver(() => {
    if (w.__beforeDraw === undefined && document.querySelector("#view .month")) {
      w.__beforeDraw = w.__made;
      seen.disconnect();
    }
  });
  seen.observe(document, { childList: true, subtree: true });
}

/** Every date the month shows, as it shows them: its title, the weekdays, each day's label, each chip's time, each line of the agenda. */
function shownDates() {
  const texts = (sel: string) => Array.from(document.querySelectorAll(sel), (e) => e.textContent ?? "");
  return {
    title: texts("#cal-title"),
    weekdays: texts(".weekdays li"),
    days: Array.from(document.querySelectorAll(".day-add"), (e) => e.getAttribute("title") ?? ""),
    times: texts(".chip .t"),
    agenda: texts(".agenda .when"),
  };
}

/** The same, as the browser's own formatters write them for the days and events the page shows. */
function formattedDates(o: { month: string; events: { when: string; hourly: boolean }[] }) {
  const f = (opts: Intl.DateTimeFormatOptions) => new Intl.DateTimeFormat(undefined, opts);
  const [y, m] = o.month.split("-").map(Number) as [number, number];
  const first = new Date(y, m - 1, 1);
  const monday = new Date(y, m - 1, 1 - ((first.getDay() + 6) % 7));
  const days = Array.from({ length: 42 }, (_, i) => new Date(monday.getFullYear(), monday.getMonth(), monday.getDate() + i));
  const time = f({ hour: "2-digit", minute: "2-digit" });
  return {
    title: [f({ month: "long", year: "numeric" }).format(first)],
    weekdays: days.slice(0, 7).map((d) => f({ weekday: "short" }).format(d)),
    days: days.map((d) => `Add an event on ${f({ weekday: "long", day: "numeric", month: "long", year: "numeric" }).format(d)}`),
    times: o.events.map((e) => (e.hourly ? "hourly" : time.format(new Date(e.when)))),
    agenda: o.events.map((e) => `${f({ weekday: "short", day: "numeric" }).format(new Date(e.when))} · ${e.hourly ? "every hour" : time.format(new Date(e.when))}`),
  };
}

test.skipIf(!chromiumPresent)("the month's first draw makes no date formatter in English and says what the browser's formatters say, in every language", async () => {
  const month = nextMonth(1).slice(0, 7);
  const h2 = await startHearth({ env: { HEARTH_METERING: "off" } });
  try {
    const t = await h2.token("dora");
    const account = await ensureAccount(h2.rt.store, "dora");
    const { cookie: set } = await startSession(h2.rt, new Request(`${h2.url}/`), account);
    const [name, value] = set.split(";")[0].split("=");
    // One a morning, one an afternoon (AM and PM), one at midnight's hour: on days of a week, so each shows as a chip.
    const made = [`${month}-03T00:05:00+01:00`, `${month}-04T09:30:00+01:00`, `${month}-05T21:45:00+01:00`];
    for (const [i, when] of made.entries()) expect((await h2.call("events/create", { title: `Event ${i}`, when }, { token: t })).status).toBe(200);
    const events = made.map((when) => ({ when, hourly: false }));
    for (const [locale, plain] of [["en-US", true], ["en-GB", true], ["fr-FR", false], ["de-DE", false]] as const) {
      const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, timezoneId: ZONE, locale });
      await ctx.addCookies([{ name, value, url: h2.url }]);
      const page = await ctx.newPage();
      await page.addInitScript(watchDates);
      await page.goto(`${h2.url}/my/events?date=${month}-10`);
      await page.locator('.month [data-event="Event 2"]').waitFor();
      // The phone's agenda is drawn just after the month.
      await page.locator(".agenda .when").nth(2).waitFor();
      const first = await page.evaluate(shownDates);
      const before = await page.evaluate(() => (window as unknown as { __beforeDraw: number }).__beforeDraw);
      if (plain) {
        expect(before).toBe(0);
        // The worker's check of every plain shape, over a year of samples, found nothing to correct.
        await page.waitForFunction(() => (window as unknown as { __checked?: string[] }).__checked !== undefined);
        expect(await page.evaluate(() => (window as unknown as { __checked: string[] }).__checked)).toEqual([]);
      } else expect(before).toBeGreaterThan(0);
      expect(first).toEqual(await page.evaluate(formattedDates, { month, events }));
      await ctx.close();
    }

    // A browser whose language says English but whose formatters speak German: the first draw is redrawn in theirs.
    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, timezoneId: ZONE, locale: "de-DE" });
    await ctx.addCookies([{ name, value, url: h2.url }]);
    const page = await ctx.newPage();
    await page.addInitScript(() => Object.defineProperty(Navigator.prototype, "language", { get: () => "en-US" }));
    await page.goto(`${h2.url}/my/events?date=${month}-10`);
    await page.locator('.month [data-event="Event 2"]').waitFor();
    await page.locator(".agenda .when").nth(2).waitFor();
    const german = await page.evaluate(formattedDates, { month, events });
    await page.waitForFunction((title) => document.getElementById("cal-title")?.textContent === title, german.title[0]);
    expect(await page.evaluate(shownDates)).toEqual(german);
    await ctx.close();
  } finally {
    await h2.stop();
  }
});

test.skipIf(!chromiumPresent)("on a phone the header's row of screens is scrolled to show the Calendar, as the page first paints", async () => {
  const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, timezoneId: ZONE, locale: "en-GB" });
  await ctx.addCookies([cookie]);
  const page = await ctx.newPage();
  await page.goto(`${h.url}/my/events`);
  await page.locator(".month").waitFor();
  const row = page.locator(".approw .screens");
  await page.waitForFunction(() => (document.querySelector(".approw .screens") as HTMLElement).scrollLeft > 0);
  const [link, shown] = await Promise.all([page.locator(".approw .screens [aria-current=page]").boundingBox(), row.boundingBox()]);
  expect(link!.x).toBeGreaterThanOrEqual(shown!.x);
  expect(link!.x + link!.width).toBeLessThanOrEqual(shown!.x + shown!.width);
  await ctx.close();
});
