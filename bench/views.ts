// Each screen's first load, as a browser with an empty cache fetches it: the
// shell page and the scripts it names, gzipped as they travel (the page as a
// proxy would compress it; the bundles are served gzipped). Target: under
// 150 KB each. Then the time until it is interactive in Chromium with its CPU
// slowed 4× (CDP Emulation.setCPUThrottlingRate): from the navigation's start
// until the view has drawn what it loaded (no loading notice left) and the
// page's main thread is next idle, so a click would be answered. Target:
// under 1 s. Each screen is loaded RUNS times (5; `--runs N`), each in a
// fresh context, and the median is told with the fastest and the slowest: on
// a shared machine one load says little. Then Lighthouse's performance,
// accessibility and best-practices scores for each (bench/lighthouse.ts;
// target: 95 or more each). `bun bench/views.ts` alone, or within
// `bun run bench`.
import { gzipSync } from "node:zlib";
import { screensOf } from "../core/views/screens.ts";
import { signUp } from "../test/auth/people.ts";
import { chromiumPresent, launchChromium } from "../test/browser.ts";
import { lighthouseScores, type Scores } from "./lighthouse.ts";
import { startHearth } from "../test/harness.ts";

export interface ViewLoad {
  screen: string;
  path: string;
  page_gzip_bytes: number;
  scripts_gzip_bytes: number;
  total_kb: number;
  /** Time to interactive with the CPU throttled 4×, ms: the median of the loads; null without Chromium. */
  tti_4x_ms: number | null;
  /** Every load's time, fastest first. */
  tti_4x_runs_ms: number[];
  /** Lighthouse's scores (0-100); null without Chromium. */
  lighthouse: Scores | null;
}

const RUNS = (() => {
  const i = process.argv.indexOf("--runs");
  return i >= 0 ? Math.max(1, Number(process.argv[i + 1]) || 1) : 5;
})();
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : Math.round((s[s.length / 2 - 1]! + s[s.length / 2]!) / 2);
};

/**
 * Set in the page before it runs: the first moment the view shows no loading
 * notice (the shell's own "Loading…" counts as one), then the main thread's
 * next idle time.
 */
function watchInteractive() {
  const w = window as unknown as { __interactive?: number };
  const check = () => {
    const view = document.getElementById("view");
    if (w.__interactive !== undefined || !view || !view.firstElementChild || view.querySelector(".state.loading")) return;
    observer.disconnect();
    requestAnimationFrame(() => requestIdleCallback(() => (w.__interactive = performance.now())));
  };
  const observer = new MutationObserver(check);
  observer.observe(document, { childList: true, subtree: true });
}

async function interactiveTimes(url: string, cookie: string, paths: string[]): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>(paths.map((p) => [p, []]));
  if (!chromiumPresent) return out;
  // The full browser with V8's optimising compiler, which the tests leave off: what is timed here is a page as people's browsers run it.
  const browser = await launchChromium([], { timed: true });
  try {
    const [name, value] = cookie.split("=");
    // Each screen once first, so every bundle is built (from source, a view is bundled when first asked for) before anything is timed.
    const warm = await browser.newContext();
    await warm.addCookies([{ name: name!, value: value!, url }]);
    const wp = await warm.newPage();
    for (const p of paths) await wp.goto(url + p);
    await warm.close();
    // Round after round, so a burst of load on the machine falls on every screen alike rather than on one.
    for (let run = 0; run < RUNS; run++) for (const p of paths) {
      // A fresh context for each: an empty cache, as a first visit has.
      const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
      await context.addCookies([{ name: name!, value: value!, url }]);
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send("Emulation.setCPUThrottlingRate", { rate: 4 });
      await page.addInitScript(watchInteractive);
      await page.goto(url + p);
      await page.waitForFunction(() => (window as unknown as { __interactive?: number }).__interactive !== undefined);
      out.get(p)!.push(Math.round(await page.evaluate(() => (window as unknown as { __interactive: number }).__interactive)));
      await context.close();
    }
  } finally {
    await browser.close();
  }
  return out;
}

export async function benchViews(): Promise<ViewLoad[]> {
  const h = await startHearth({ env: { HEARTH_SIGNUP: "open", HEARTH_METERING: "off" } });
  try {
    const who = await signUp(h, "bench");
    const out: ViewLoad[] = [];
    for (const s of screensOf(h.rt).filter((s) => s.file)) {
      const page = await fetch(h.url + s.href, { headers: { cookie: who.cookie } });
      const text = await page.text();
      const pageBytes = gzipSync(text).byteLength;
      let scripts = 0;
      for (const m of text.matchAll(/(?:src|href)="(\/my\/assets\/[^"]+\.js)"/g)) {
        const js = await fetch(h.url + m[1], { headers: { "accept-encoding": "gzip" }, decompress: false } as RequestInit);
        scripts += (await js.arrayBuffer()).byteLength;
      }
      out.push({ screen: s.title, path: s.href, page_gzip_bytes: pageBytes, scripts_gzip_bytes: scripts, total_kb: Math.round(((pageBytes + scripts) / 1024) * 10) / 10, tti_4x_ms: null, tti_4x_runs_ms: [], lighthouse: null });
    }
    const times = await interactiveTimes(h.url, who.cookie, out.map((r) => r.path));
    const scores = chromiumPresent ? await lighthouseScores(h.url, who.cookie, out.map((r) => r.path)) : new Map<string, Scores>();
    for (const r of out) {
      r.lighthouse = scores.get(r.path) ?? null;
      r.tti_4x_runs_ms = (times.get(r.path) ?? []).sort((a, b) => a - b);
      r.tti_4x_ms = r.tti_4x_runs_ms.length ? median(r.tti_4x_runs_ms) : null;
    }
    return out;
  } finally {
    await h.stop();
  }
}

export function viewsTable(rows: ViewLoad[]): string {
  const lines = rows.map((r) => `${r.screen.padEnd(14)} ${r.path.padEnd(16)} page ${String(r.page_gzip_bytes).padStart(6)} B  scripts ${String(r.scripts_gzip_bytes).padStart(6)} B  total ${String(r.total_kb).padStart(6)} KB ${r.total_kb < 150 ? "(< 150 KB)" : "(OVER 150 KB)"}  ${
      r.tti_4x_ms === null ? "interactive: no Chromium" : `interactive (CPU 4× slower) ${String(r.tti_4x_ms).padStart(5)} ms ${r.tti_4x_ms < 1000 ? "(< 1 s)" : "(OVER 1 s)"} median of ${r.tti_4x_runs_ms.length}, ${r.tti_4x_runs_ms[0]}–${r.tti_4x_runs_ms.at(-1)}`
    }`);
  const scored = rows.filter((r) => r.lighthouse);
  const low = (n: number) => (n < 95 ? `${n} (UNDER 95)` : String(n));
  const lh = scored.map((r) => {
    const s = r.lighthouse!;
    return `${r.screen.padEnd(14)} lighthouse performance ${low(s.performance)}, accessibility ${low(s.accessibility)}, best practices ${low(s.best_practices)}${s.lost.length ? `; lost points: ${s.lost.join(", ")}` : ""}`;
  });
  return [...lines, ...(lh.length ? ["", ...lh] : [])].join("\n");
}

if (import.meta.main) console.log(viewsTable(await benchViews()));
