// Headless Debian Chromium for the browser tests, started the one way this
// machine allows: no sandbox (root), no GPU, and nothing that reaches out on
// its own (the network is closed; background lookups would be refused).
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { CHROMIUM } from "./prepare.ts";

export const chromiumPresent = existsSync(CHROMIUM);

/** How long a page's actions and navigations may wait: a busy machine renders late (Playwright's own default is 30 s). */
const PATIENCE_MS = 300_000;

export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: PATIENCE_MS,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", ...extraArgs],
  });
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(PATIENCE_MS);
    await context.addInitScript(RECORD_TOASTS);
    return context;
  };
  const newPage = browser.newPage.bind(browser);
  browser.newPage = async (options) => {
    const page = await newPage(options);
    page.setDefaultTimeout(PATIENCE_MS);
    await page.addInitScript(RECORD_TOASTS);
    return page;
  };
  return browser;
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
export async function sawToast(page: Page, text: string): Promise<void> {
  await page.waitForFunction((t) => ((window as unknown as { __toasts?: string[] }).__toasts ?? []).some((m) => m.includes(t)), text);
}
