// Headless Debian Chromium for the browser tests, started the one way this
// machine allows: no sandbox (root), no GPU, and nothing that reaches out on
// its own (the network is closed; background lookups would be refused).
import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";
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
    return context;
  };
  const newPage = browser.newPage.bind(browser);
  browser.newPage = async (options) => {
    const page = await newPage(options);
    page.setDefaultTimeout(PATIENCE_MS);
    return page;
  };
  return browser;
}
