// one store: the front pages in a browser; the methods behind them run on both stores in their services' tests
// The front door's pages under axe, apart from test/front/browser.test.ts's walk through them so the two run at
// once: the same pages in the same state, a person signed up with an event, a task, a place with prayer times and
// a note, made here over HTTP as that walk makes them in the browser.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { settle } from "../../core/upstream/index.ts";
import type { Hearth } from "../harness.ts";
import { everyLook, launchChromium, chromiumPresent } from "../browser.ts";
import { CHROMIUM } from "../prepare.ts";
import { postForm, signUp, startFront, startProviders, type Person } from "./instance.ts";

const present = chromiumPresent;
if (!present) console.log(`skipping the front-door axe test: ${CHROMIUM} is missing (bun test/prepare.ts installs it as root)`);

const ARTIFACTS = join(import.meta.dir, "..", "artifacts");

const fixture = startProviders();
let h: Hearth;
let browser: Browser;
let ann: Person;

beforeAll(async () => {
  if (!present) return;
  h = await startFront(fixture.url, { HEARTH_METERING: "off" });
  ann = await signUp(h.url, "ann");
  const token = await h.token("ann");
  await h.call("events/create", { title: "Dentist", when: "2026-11-21T15:00:00+00:00" }, { token });
  await h.call("tasks/create", { title: "Buy milk", due: "2026-11-22 10:00" }, { token });
  const saved = await postForm(h.url, "/home/place", ann, { csrf: ann.csrf, place: "51.5012, -0.1246", prayer: "1" });
  if (saved.status !== 303) throw new Error(`saving the place answered ${saved.status}`);
  await h.call("notes/add", { title: "from the services page", text: "typed into the try-it form" }, { token });
  browser = await launchChromium();
  mkdirSync(ARTIFACTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  if (h) {
    await settle(h.rt);
    await h.stop();
  }
  fixture.stop();
});

test.skipIf(!present)(
  "the pages pass axe's WCAG 2.1 AA and best-practice checks, in light and dark, at both widths",
  async () => {
    // The audit's own script is injected, so this context alone sets the pages' script policy aside.
    const ctx = await browser.newContext({ bypassCSP: true });
    await ctx.addCookies([{ name: ann.cookie.split("=")[0], value: ann.cookie.split("=").slice(1).join("="), url: h.url }]);
    const pages = ["/", "/services", "/status", "/token"];
    const screens = pages.map((path) => ({ name: `front-${path.slice(1) || "home"}`, path }));
    const found = await everyLook(await ctx.newPage(), h.url, screens, { shots: ARTIFACTS, suffix: "-axe" });
    await ctx.close();
    expect(found).toEqual({});
  },
);
