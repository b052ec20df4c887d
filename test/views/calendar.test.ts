// one store: the Tasks and Calendar screens; their methods and live updates run on both stores in test/tasks and test/events
// The Tasks and Calendar screens in Chromium, as a person uses them at a
// desktop's and a phone's width: a task dragged to Done; a weekly event made
// by clicking a day, dragged to another day, and an event made meanwhile
// through the API appearing without a reload. Each screen is checked with axe
// in light and dark at both widths, and left in test/artifacts/ to be looked at.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { chromiumPresent, everyLook, type Screen } from "../browser.ts";
import { personAndBrowser } from "./signed-in.ts";
import type { Hearth } from "../harness.ts";

const ARTIFACTS = join(import.meta.dir, "..", "artifacts");
const WIDTHS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } };
/** Not UTC, so a day or an hour read in the wrong zone shows. */
const ZONE = "America/New_York";

let h: Hearth;
let browser: Browser;
let token: string;
let cookie: { name: string; value: string; url: string };

beforeAll(async () => {
  if (!chromiumPresent) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  ({ h, token, cookie, browser } = await personAndBrowser("ann"));
});
afterAll(async () => {
  await browser?.close();
  await h?.stop();
});

async function signedIn(size: { width: number; height: number }, o: { colorScheme?: "light" | "dark"; bypassCSP?: boolean } = {}): Promise<BrowserContext> {
  const ctx = await browser.newContext({ viewport: size, timezoneId: ZONE, locale: "en-GB", ...o });
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

async function tasks(): Promise<{ id: string; title: string; status: string }[]> {
  return (await h.call("tasks/list", {}, { token })).body.result;
}
async function events(): Promise<{ id: string; title: string; when: string; repeat: string | null }[]> {
  return (await h.call("events/list", {}, { token })).body.result;
}

test.skipIf(!chromiumPresent)("a task is moved to done by dragging it, at a desktop's and a phone's width", async () => {
  await h.call("tasks/create", { title: "File the taxes", due: "2020-01-01 09:00" }, { token });
  const asked = (await h.call("tasks/create", { title: "Summarise the week", assignee: "agent" }, { token })).body.result;
  await h.call("tasks/update", { id: asked.id, status: "done", result: "Three meetings, one trip booked." }, { token });
  for (const [label, size] of Object.entries(WIDTHS)) {
    const title = `Water the plants (${label})`;
    await h.call("tasks/create", { title }, { token });
    const ctx = await signedIn(size);
    const page = await ctx.newPage();
    await page.goto(`${h.url}/my/tasks`);
    const card = page.locator(`[data-task="${title}"]`);
    await card.waitFor();
    expect(await page.locator('[data-status="todo"]').locator(`[data-task="${title}"]`).count()).toBe(1);
    // Overdue is said in words (and, once Done shows, the agent's answer on its task).
    await page.getByText("Overdue:").first().waitFor();
    // Grabbed by its title, as a hand does (its menu and button are controls of their own).
    // On a phone one column shows at a time: the card is dropped on the switch that names the other.
    if (label === "phone") {
      await card.locator(".card-title").dragTo(page.locator('[data-drop="done"]'));
      await page.locator('[data-drop="done"]').click();
    } else await card.locator(".card-title").dragTo(page.locator('[data-status="done"] h2'));
    await page.locator('[data-status="done"]').locator(`[data-task="${title}"]`).waitFor();
    expect((await tasks()).find((t) => t.title === title)?.status).toBe("done");
    await page.getByText("Three meetings, one trip booked.").waitFor();
    await page.screenshot({ path: join(ARTIFACTS, `tasks-moved-${label}.png`), fullPage: true });

    // The menu does the same from the keyboard: back to Doing.
    await page.getByLabel(`Move “${title}” to`).selectOption("doing");
    if (label === "phone") await page.locator('[data-drop="doing"]').click();
    await page.locator('[data-status="doing"]').locator(`[data-task="${title}"]`).waitFor();
    expect((await tasks()).find((t) => t.title === title)?.status).toBe("doing");
    await ctx.close();
  }
});

test.skipIf(!chromiumPresent)("a task is added with the form, for the agent", async () => {
  const ctx = await signedIn(WIDTHS.phone);
  const page = await ctx.newPage();
  await page.goto(`${h.url}/my/tasks`);
  await page.locator(".board").waitFor();
  await page.keyboard.press("n");
  await page.getByLabel("Title").fill("Book the train");
  await page.getByLabel("For").selectOption("agent");
  await page.getByRole("button", { name: "Add task" }).click();
  await page.locator('[data-status="todo"]').locator('[data-task="Book the train"]').getByText("For the agent").waitFor();
  const made = (await h.call("tasks/list", {}, { token })).body.result.find((t: { title: string }) => t.title === "Book the train");
  expect(made).toMatchObject({ assignee: "agent", status: "todo" });
  await ctx.close();
});

test.skipIf(!chromiumPresent)(
  "a weekly event is made by clicking a day, dragged to another day, and an event made through the API appears without a reload",
  async () => {
    const month = nextMonth(1).slice(0, 7);
    for (const [label, size] of Object.entries(WIDTHS)) {
      const title = `Standup ${label}`;
      const ctx = await signedIn(size);
      const page = await ctx.newPage();
      await page.goto(`${h.url}/my/events?date=${nextMonth(10)}`);
      await page.locator(`[data-day="${nextMonth(12)}"] .day-add`).click();
      const dialog = page.locator("dialog.event");
      await dialog.waitFor();
      await dialog.getByLabel("Title").fill(title);
      await dialog.getByLabel("Time").fill("09:30");
      await dialog.getByLabel("Repeat").selectOption("weekly");
      await dialog.getByRole("button", { name: "Add event" }).click();
      await dialog.waitFor({ state: "detached" });
      // Weekly: on the 12th and a week later.
      await page.locator(`[data-day="${nextMonth(12)}"] [data-event="${title}"]`).waitFor();
      await page.locator(`[data-day="${nextMonth(19)}"] [data-event="${title}"]`).waitFor();
      const made = (await events()).find((e) => e.title === title)!;
      expect(made.repeat).toBe("weekly");
      expect(made.when.startsWith(`${nextMonth(12)}T09:30:00`)).toBe(true);

      await page.locator(`[data-day="${nextMonth(12)}"] [data-event="${title}"]`).dragTo(page.locator(`[data-day="${nextMonth(14)}"]`));
      await page.locator(`[data-day="${nextMonth(14)}"] [data-event="${title}"]`).waitFor();
      await page.locator(`[data-day="${nextMonth(21)}"] [data-event="${title}"]`).waitFor();
      // The move makes the event anew, then cancels the old one: it leaves the 12th once both are done.
      await page.locator(`[data-day="${nextMonth(12)}"] [data-event="${title}"]`).waitFor({ state: "detached" });
      const moved = (await events()).filter((e) => e.title === title);
      expect(moved.length).toBe(1);
      expect(moved[0]).toMatchObject({ repeat: "weekly" });
      expect(moved[0].when.startsWith(`${nextMonth(14)}T09:30:00`)).toBe(true);

      // Made elsewhere (the agent, a phone): it shows on the open page as it is committed.
      const other = `Dentist ${label}`;
      await h.call("events/create", { title: other, when: `${nextMonth(20)}T15:00:00-05:00` }, { token });
      await page.locator(`[data-day="${nextMonth(20)}"] [data-event="${other}"]`).waitFor();
      expect(page.url()).toBe(`${h.url}/my/events?date=${nextMonth(10)}`);
      await page.screenshot({ path: join(ARTIFACTS, `calendar-${month}-${label}.png`), fullPage: true });
      await ctx.close();
    }
  },
);

test.skipIf(!chromiumPresent)("an event is edited from its chip and the week and day views show it", async () => {
  const made = (await h.call("events/create", { title: "Piano lesson", when: `${nextMonth(5)}T17:00:00-05:00`, minutes: 45 }, { token })).body.result;
  const ctx = await signedIn(WIDTHS.desktop);
  const page = await ctx.newPage();
  await page.goto(`${h.url}/my/events?view=week&date=${nextMonth(5)}`);
  await page.locator('[data-event="Piano lesson"]').click();
  const dialog = page.locator("dialog.event");
  await dialog.getByLabel("Title").fill("Piano lesson with Ada");
  await dialog.getByLabel("Time").fill("18:00");
  await dialog.getByRole("button", { name: "Save" }).click();
  await page.locator(`[data-day="${nextMonth(5)}"] [data-event="Piano lesson with Ada"]`).waitFor();
  await page.locator('[data-event="Piano lesson"]').waitFor({ state: "detached" });
  const all = await events();
  expect(all.some((e) => e.title === "Piano lesson")).toBe(false);
  expect(all.find((e) => e.title === "Piano lesson with Ada")?.when.startsWith(`${nextMonth(5)}T18:00:00`)).toBe(true);
  // Changed in place: the same event, by its id, as a calendar app syncing sees it.
  expect(all.find((e) => e.title === "Piano lesson with Ada")?.id).toBe(made.id);
  await page.goto(`${h.url}/my/events?view=day&date=${nextMonth(5)}`);
  await page.locator('[data-event="Piano lesson with Ada"]').waitFor();
  await ctx.close();
});

test.skipIf(!chromiumPresent)("the screens pass axe in light and dark at both widths", async () => {
  // The audit's own script is injected, so this context alone sets the page's script policy aside.
  const ctx = await signedIn(WIDTHS.desktop, { bypassCSP: true });
  const screen = (name: string, path: string, ready: string): Screen => ({ name, path, ready: (p) => p.locator(ready).first().waitFor() });
  const found = await everyLook(
    await ctx.newPage(),
    h.url,
    [
      screen("tasks", "/my/tasks", ".board"),
      screen("tasks-new", "/my/tasks?new=1", "form.new-task"),
      screen("calendar-month", `/my/events?date=${nextMonth(10)}`, ".month"),
      screen("calendar-week", `/my/events?view=week&date=${nextMonth(14)}`, ".week"),
      screen("calendar-new", `/my/events?date=${nextMonth(10)}&new=${nextMonth(16)}`, "dialog.event"),
    ],
    { shots: ARTIFACTS, fullPage: true },
  );
  await ctx.close();
  expect(found).toEqual({});
});
