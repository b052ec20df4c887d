// Debian's headless Chromium shell (see test/prepare.ts) for the browser
// tests, started the one way this machine allows: no sandbox (root), no GPU,
// and nothing that reaches out on its own (the network is closed; background
// lookups would be refused).
import { appendFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Browser, BrowserContext, BrowserContextOptions, Locator, Page } from "playwright-core";
import { CHROMIUM, FULL_CHROMIUM } from "./prepare.ts";

export const chromiumPresent = existsSync(CHROMIUM);

/** How long a page's actions and navigations may wait: a busy machine renders late (Playwright's own default is 30 s). */
const PATIENCE_MS = 300_000;

/**
 * A Chromium for one test file. Files in one test process share one browser, launched by the first that asks (a
 * launch was two and a half seconds of CPU, the browser's and its first helpers', in each of some forty files): what
 * each gets is a handle whose contexts and pages are its own and whose close() closes those and leaves the browser
 * to the next file. Every test works in contexts of its own (cookies, storage, cache, service workers and downloads
 * are a context's), so a file sees nothing another left; a browser is launched, not connected to, so a download's
 * path() is read as before. A file that needs other switches, or a benchmark timing a page (`timed`, see launch),
 * gets a browser of its own, closed by its close().
 */
export async function launchChromium(extraArgs: string[] = [], o: { timed?: boolean } = {}): Promise<Browser> {
  if (extraArgs.length || o.timed) {
    const own = await launch(extraArgs, o.timed);
    const close = own.browser.close.bind(own.browser);
    own.browser.close = async (options) => {
      own.note();
      return close(options);
    };
    return own.browser;
  }
  let current = shared && (await shared);
  // One that crashed or was closed is launched again for the next file.
  if (!current?.browser.isConnected()) {
    shared = launch([], false);
    current = await shared;
  }
  return handle(current);
}

interface Launched {
  browser: Browser;
  /** Notes the CPU the browser's processes used since the last note (see noteRendererCpu). */
  note(): void;
}

/** The process's shared browser (see launchChromium). It is never closed: it ends with the test process, whose pipe to it closes. */
let shared: Promise<Launched> | null = null;

/**
 * V8 without its optimising compiler, unless `timed`: a test's page lives for seconds, and what TurboFan
 * compiled for it on its background threads was mostly thrown away with the page. Without it the renderers used a
 * sixth less CPU on the front door's pages under axe (8.0 s against 9.4 s), axe's own loops included; what a page
 * does is the same, only its script runs more slowly, and no test times one. A benchmark that times a page asks for
 * the browser people run: the full Chromium where it is installed, not the headless shell, whose times are not
 * those people see, with the optimising compiler.
 */
async function launch(extraArgs: string[], timed = false): Promise<Launched> {
  const { chromium } = await import("playwright-core");
  const before = new Set(chromiumChildren());
  const browser = await chromium.launch({
    executablePath: timed && existsSync(FULL_CHROMIUM) ? FULL_CHROMIUM : CHROMIUM,
    headless: true,
    timeout: PATIENCE_MS,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", ...(timed ? [] : ["--js-flags=--no-opt"]), ...extraArgs],
  });
  const main = chromiumChildren().find((pid) => !before.has(pid));
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    if (!SHOTS) context.on("page", skipShots);
    context.setDefaultTimeout(PATIENCE_MS);
    await context.addInitScript(RECORD_TOASTS);
    return context;
  };
  const newPage = browser.newPage.bind(browser);
  browser.newPage = async (options) => {
    const page = await newPage(options);
    if (!SHOTS) skipShots(page);
    page.setDefaultTimeout(PATIENCE_MS);
    await page.addInitScript(RECORD_TOASTS);
    return page;
  };
  // An own browser's main process is reaped by this process, so its CPU is in the piece's; the shared one's is not
  // (the process ends first), so its notes count it too.
  const counted = { cpu: 0 };
  const own = extraArgs.length > 0 || timed;
  return { browser, note: () => main !== undefined && noteRendererCpu(main, !own, counted) };
}

/**
 * A file's view of the shared browser: its newContext() and newPage() are the browser's, noted, and its close()
 * closes what they opened (a page from newPage() has a context of its own) rather than the browser.
 */
function handle(launched: Launched): Browser {
  const { browser } = launched;
  const opened = new Set<BrowserContext>();
  let closed = false;
  const own = {
    async newContext(options?: BrowserContextOptions) {
      const context = await browser.newContext(options);
      opened.add(context);
      context.once("close", () => opened.delete(context));
      return context;
    },
    async newPage(options?: BrowserContextOptions) {
      const page = await browser.newPage(options);
      const context = page.context();
      opened.add(context);
      context.once("close", () => opened.delete(context));
      return page;
    },
    contexts: () => [...opened],
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...opened].map((c) => c.close().catch(() => {})));
      launched.note();
    },
  };
  return new Proxy(browser, {
    get(target, key) {
      if (Object.hasOwn(own, key)) return own[key as keyof typeof own];
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** Each process's parent and CPU seconds (its own, and its reaped children's), from /proc/<pid>/stat. */
function processes(): { pid: number; ppid: number; name: string; cpu: number }[] {
  const out: { pid: number; ppid: number; name: string; cpu: number }[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      // Fields after the name: state, ppid, ..., utime (12th), stime, cutime, cstime, in clock ticks (100 a second on Linux).
      const f = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
      out.push({ pid: Number(d), ppid: Number(f[1]), name, cpu: (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100 });
    } catch {}
  }
  return out;
}

/** This process's Chromium children (a browser's main process each). */
function chromiumChildren(): number[] {
  if (!process.env.HEARTH_TEST_CLUSTER_CPU || !existsSync("/proc/self/stat")) return [];
  return processes()
    .filter((p) => p.ppid === process.pid && /chrom/i.test(p.name))
    .map((p) => p.pid);
}

/**
 * The CPU a browser's renderers, zygotes and helpers used, noted in the file test/run.ts reads a piece's daemons'
 * CPU from (HEARTH_TEST_CLUSTER_CPU): they are the children of Chromium's zygote, which is not reaped by the
 * process that waits for the browser, so none of their CPU is in the test process's usage. Its main process is,
 * once it exits, unless the test process ends first (the shared browser): `withMain` counts it too. Each note is
 * what was used since the last (`counted`), a shared browser being noted at each file's close.
 */
function noteRendererCpu(main: number, withMain: boolean, counted: { cpu: number }): void {
  const file = process.env.HEARTH_TEST_CLUSTER_CPU;
  if (!file) return;
  const all = processes();
  const under = new Set([main]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all)
      if (!under.has(p.pid) && under.has(p.ppid)) {
        under.add(p.pid);
        grew = true;
      }
  }
  const cpu = all.filter((p) => (withMain || p.pid !== main) && under.has(p.pid)).reduce((n, p) => n + p.cpu, 0);
  // A renderer that ended is in its parent's count (cutime) once reaped; one not yet reaped may drop out for a moment.
  const since = Math.max(0, cpu - counted.cpu);
  counted.cpu = Math.max(counted.cpu, cpu);
  appendFileSync(file, `chromium ${since.toFixed(2)}\n`);
}

/**
 * Screenshots are written for a person to look at. A whole run of the suite
 * (test/run.ts with no paths) is looked at by no one and sets
 * HEARTH_TEST_SHOTS=off: a page's and a part's screenshot() then return an
 * empty image without rendering one, which was a tenth of a browser file's
 * CPU. Nothing a test checks reads a screenshot back; every other step, axe's
 * included, runs the same.
 */
const SHOTS = process.env.HEARTH_TEST_SHOTS !== "off";
let shotsSkipped = false;
function skipShots(page: Page): void {
  if (shotsSkipped) return;
  shotsSkipped = true;
  const none = async () => Buffer.alloc(0);
  for (const proto of [Object.getPrototypeOf(page), Object.getPrototypeOf(page.locator("html"))]) proto.screenshot = none;
}

/**
 * Every page notes each notice (toast) it shows, as it appears. A notice goes
 * by itself after a few seconds, and on a busy machine the test's next look
 * may come later than that: `sawToast` asks the page what it showed, so a
 * test never depends on looking while the notice is still there.
 */
const RECORD_TOASTS = `(() => {
  const seen = (window.__toasts = []);
  new MutationObserver((changes) => {
    for (const c of changes)
      for (const n of c.addedNodes)
        if (n.nodeType === 1) for (const t of [n, ...n.querySelectorAll(".toast")]) if (t.classList.contains("toast")) seen.push(t.textContent);
  }).observe(document, { subtree: true, childList: true });
})()`;

/** Waits until the page has shown a notice containing `text`, whether or not it is still there. */
/** Opens the menu under the signed-in person's name in the site header (account, tokens, activity, approvals, settings, people, sign out). */
export async function accountMenu(page: Page): Promise<Locator> {
  const menu = page.locator("header.site details.me");
  if (!(await menu.evaluate((d: HTMLDetailsElement) => d.open))) await menu.locator("summary").click();
  return menu;
}

export async function sawToast(page: Page, text: string): Promise<void> {
  await page.waitForFunction((t) => ((window as unknown as { __toasts?: string[] }).__toasts ?? []).some((m) => m.includes(t)), text);
}

/** The four looks every page is checked in: light and dark, at a desktop's and a phone's width. */
export const LOOKS = [
  { scheme: "light", label: "desktop", size: { width: 1280, height: 900 } },
  { scheme: "light", label: "phone", size: { width: 390, height: 844 } },
  { scheme: "dark", label: "desktop", size: { width: 1280, height: 900 } },
  { scheme: "dark", label: "phone", size: { width: 390, height: 844 } },
] as const;

export interface Screen {
  /** In the screenshots' names and in what axe found. */
  name: string;
  path: string;
  /** Waits until the page shows what it should (a condition, never a time); may act on it first. */
  ready?: (page: Page) => Promise<unknown>;
  /** Done at each look before the shot, once the page is laid out at it (scrolling what is shot into view). */
  each?: (page: Page) => Promise<unknown>;
  /** The part of the page that is shot (what is new on it), else the page. */
  part?: (page: Page) => Locator;
  /** The whole page rather than the window, over everyLook's own choice. */
  fullPage?: boolean;
}

export interface Violation {
  id: string;
  at: string[];
}

const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"];

/** axe's script, read once per process rather than at each page that is checked. */
let axeSource: string | undefined;

/**
 * axe's findings on the page as it is now, the script added once per document. It is evaluated through the
 * debugging protocol (which the page's script policy does not govern) rather than added as a script element: no
 * half-megabyte element in the page, and a tenth of a second less of the renderer's CPU at each document. axe
 * gathers only its violations' nodes (`resultTypes`): the rules and what they find are the same, but the nodes of
 * every rule that passed, which were thrown away, cost two fifths of each run.
 */
export async function axeOn(page: Page): Promise<Violation[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate((axeSource ??= readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")));
  return page.evaluate(async (tags) => {
    const axe = (window as unknown as { axe: { run(d: Document, o: unknown): Promise<{ violations: { id: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const r = await axe.run(document, { runOnly: tags, resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, at: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) }));
  }, AXE_TAGS);
}

/** Until the page is laid out again after a change of width or scheme: two frames, a condition, not a time. */
export function laidOut(page: Page): Promise<unknown> {
  return page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
}

/**
 * Each screen opened once on `page` and seen in the four looks by changing
 * the viewport and the colour scheme in place (no new context, no second
 * load, axe added once): a screenshot `<name>-<label>-<scheme><suffix>.png`
 * in `shots` and axe's findings for each. Returns what axe found, keyed
 * `<scheme> <label> <name>`: `{}` when nothing. The page's own viewport and
 * colour scheme are put back after.
 *
 * The page needs bypassCSP for axe's script. Screens whose `ready` acts
 * (opens a menu, types a search) act once, at the first look.
 */
export async function everyLook(page: Page, base: string, screens: Screen[], o: { shots: string; suffix?: string; fullPage?: boolean }): Promise<Record<string, Violation[]>> {
  const found: Record<string, Violation[]> = {};
  const before = page.viewportSize();
  for (const s of screens) {
    await page.goto(`${base}${s.path}`);
    await s.ready?.(page);
    for (const look of LOOKS) {
      await page.setViewportSize(look.size);
      await page.emulateMedia({ colorScheme: look.scheme });
      await laidOut(page);
      await s.each?.(page);
      const path = join(o.shots, `${s.name}-${look.label}-${look.scheme}${o.suffix ?? ""}.png`);
      if (s.part) await s.part(page).screenshot({ path });
      else await page.screenshot({ path, fullPage: s.fullPage ?? o.fullPage });
      const v = await axeOn(page);
      if (v.length) found[`${look.scheme} ${look.label} ${s.name}`] = v;
    }
  }
  if (before) await page.setViewportSize(before);
  await page.emulateMedia({ colorScheme: null });
  return found;
}

/** How long the page's message after a form's answer is looked for before the test says what the page shows instead. */
const ANSWER_MS = 60_000;

/**
 * Clicks a form's button and awaits the server's answer to its POST to `path` with the click, then reads the message
 * the answering page shows, a status or an alert, whichever it is. The answer's code comes back with what was said:
 * a refusal fails the test with its status and reason. When no message can be read within a minute (the page was
 * answered and loaded, but Chromium's page could not be read: seen now and then on this machine right after a
 * form's answer), it fails saying so, with the answer's code and whatever the page's text is by then, rather than
 * after the five minutes a page is given and with nothing said of why.
 */
export async function answerTo(page: Page, click: () => Promise<unknown>, path: string): Promise<{ status: number; said: string }> {
  const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === path), click()]);
  try {
    const said = (await page.getByRole("status").or(page.getByRole("alert")).first().textContent({ timeout: ANSWER_MS })) ?? "";
    return { status: answer.status(), said };
  } catch (e) {
    const shows = await page
      .locator("main")
      .innerText({ timeout: ANSWER_MS })
      .catch((e2: Error) => `(unreadable: ${e2.message.split("\n")[0]})`);
    throw new Error(`POST ${path} answered ${answer.status()} at ${page.url()}, but no status or alert could be read (${(e as Error).message.split("\n")[0]}); the page shows: ${shows.slice(0, 600)}`);
  }
}
