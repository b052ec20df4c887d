// Lighthouse's performance, accessibility and best-practices scores for each
// screen, signed in, as a phone loads it (Lighthouse's own mobile profile,
// its simulated slow network and 4× slower CPU). Debian's Chromium, started
// here with nothing reaching out; the instance is on 127.0.0.1, so nothing
// leaves the machine. Target: 95 or more in each. Used by bench/views.ts.
import lighthouse from "lighthouse";
import * as chromeLauncher from "chrome-launcher";
import { existsSync } from "node:fs";
import { CHROMIUM, FULL_CHROMIUM } from "../test/prepare.ts";

export interface Scores {
  performance: number;
  accessibility: number;
  best_practices: number;
  /** The audits that cost points, worst first: "id (score)". */
  lost: string[];
}

const CATEGORIES = ["performance", "accessibility", "best-practices"] as const;

/** Each path's scores (0-100), signed in with `cookie`; an empty map without Chromium. */
export async function lighthouseScores(url: string, cookie: string, paths: string[]): Promise<Map<string, Scores>> {
  const out = new Map<string, Scores>();
  const chrome = await chromeLauncher.launch({
    // The full browser where it is installed: the scores are for the browser people run, not the tests' headless shell.
    chromePath: existsSync(FULL_CHROMIUM) ? FULL_CHROMIUM : CHROMIUM,
    chromeFlags: ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    logLevel: "silent",
  });
  try {
    for (const p of paths) {
      const result = await lighthouse(url + p, {
        port: chrome.port,
        output: "json",
        logLevel: "silent",
        onlyCategories: [...CATEGORIES],
        extraHeaders: { cookie },
      });
      const lhr = result?.lhr;
      if (!lhr) continue;
      const score = (c: string) => Math.round((lhr.categories[c]?.score ?? 0) * 100);
      const lost = CATEGORIES.flatMap((c) =>
        lhr.categories[c]!.auditRefs.filter((r) => r.weight > 0)
          .map((r) => lhr.audits[r.id]!)
          .filter((a) => a.score !== null && a.score < 1)
          .map((a) => `${a.id} (${a.score!.toFixed(2)})`),
      );
      out.set(p, { performance: score("performance"), accessibility: score("accessibility"), best_practices: score("best-practices"), lost });
    }
  } finally {
    await chrome.kill();
  }
  return out;
}
