// Headless Debian Chromium for the browser tests, started the one way this
// machine allows: no sandbox (root), no GPU, and nothing that reaches out on
// its own (the network is closed; background lookups would be refused).
import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";
import { CHROMIUM } from "./prepare.ts";

export const chromiumPresent = existsSync(CHROMIUM);

export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", ...extraArgs],
  });
}
