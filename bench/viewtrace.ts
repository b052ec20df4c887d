// Where a screen's first load spends the page's main thread: each screen is
// loaded as bench/views.ts loads it (a fresh context, the CPU slowed 4×), with
// Chromium's trace on, and the main thread's work from the navigation to the
// moment the view is interactive is summed by kind (script evaluation and
// compilation, style, layout, paint, parsing…), with the network's timings of
// the page, its scripts and its first reads beside it. CPU time varies less
// than wall time on a shared machine, so a change is judged by both.
// `bun bench/viewtrace.ts [--runs N] [--save dir] [/my/notes /my/events …]`.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { screensOf } from "../core/views/screens.ts";
import { signUp } from "../test/auth/people.ts";
import { chromiumPresent, launchChromium } from "../test/browser.ts";
import { startHearth } from "../test/harness.ts";

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const RUNS = Math.max(1, Number(arg("--runs")) || 5);
const SAVE = arg("--save");
/** Only the network's timings and the moment, without the trace (which costs the instance, in this process, time of its own). */
const PLAIN = process.argv.includes("--plain");
const wanted = process.argv.slice(2).filter((a, i, all) => a.startsWith("/") && !["--runs", "--save"].includes(all[i - 1] ?? ""));

interface TraceEvent {
  name: string;
  cat: string;
  ph: string;
  ts: number;
  dur?: number;
  tdur?: number;
  pid: number;
  tid: number;
  args?: Record<string, any>;
}

/** As bench/views.ts's, and a user-timing mark at the moment, so the trace shows it. */
function watchInteractive() {
  const w = window as unknown as { __interactive?: number };
  const check = () => {
    const view = document.getElementById("view");
    if (w.__interactive !== undefined || !view || !view.firstElementChild || view.querySelector(".state.loading")) return;
    observer.disconnect();
    performance.mark("drawn");
    requestAnimationFrame(() =>
      requestIdleCallback(() => {
        w.__interactive = performance.now();
        performance.mark("interactive");
      }),
    );
  };
  const observer = new MutationObserver(check);
  observer.observe(document, { childList: true, subtree: true });
}

const CATEGORIES = [
  "toplevel",
  "devtools.timeline",
  "disabled-by-default-devtools.timeline",
  "v8.execute",
  "v8",
  "blink.user_timing",
  "loading",
  "blink",
].join(",");

interface Load {
  interactive: number;
  drawn: number;
  /** ms of main-thread work (thread time where given) before interactive, by kind. */
  kinds: Record<string, number>;
  busy: number;
  /** ms of the main thread's own CPU time (thread time) before interactive. */
  cpu: number;
  resources: { name: string; start: number; end: number }[];
}

/** The kind a slice of the main thread counts as: the innermost named work that is not a mere wrapper. */
const KIND: Record<string, string> = {
  EvaluateScript: "script",
  "v8.evaluateModule": "script",
  FunctionCall: "script",
  TimerFire: "script",
  FireAnimationFrame: "script",
  FireIdleCallback: "script",
  EventDispatch: "script",
  "v8.compile": "compile",
  "v8.compileModule": "compile",
  "V8.CompileCode": "compile",
  "v8.parseOnBackground": "compile",
  ParseHTML: "html",
  ParseAuthorStyleSheet: "css parse",
  UpdateLayoutTree: "style",
  RecalculateStyles: "style",
  Layout: "layout",
  UpdateLayerTree: "paint",
  Paint: "paint",
  PrePaint: "paint",
  Layerize: "paint",
  "V8.GCScavenger": "gc",
  MajorGC: "gc",
  MinorGC: "gc",
  "V8.GC_MC_BACKGROUND_MARKING": "gc",
};

function summarize(events: TraceEvent[]): Omit<Load, "resources" | "interactive" | "drawn"> & { interactiveTs: number; drawnTs: number; navTs: number } {
  const main = events.find((e) => e.name === "thread_name" && e.args?.name === "CrRendererMain" && events.some((x) => x.pid === e.pid && x.name === "interactive"));
  if (!main) throw new Error("no renderer main thread with the interactive mark in the trace");
  const mine = events.filter((e) => e.pid === main.pid && e.tid === main.tid);
  const mark = (n: string) => mine.find((e) => e.name === n)?.ts ?? events.find((e) => e.pid === main.pid && e.name === n)?.ts;
  const interactiveTs = mark("interactive")!;
  const drawnTs = mark("drawn")!;
  const navTs = events.find((e) => e.name === "navigationStart" && e.pid === main.pid)?.ts ?? events.find((e) => e.name === "navigationStart")?.ts ?? mine[0]!.ts;
  const slices = mine.filter((e) => e.ph === "X" && e.dur !== undefined && e.ts < interactiveTs).sort((a, b) => a.ts - b.ts || b.dur! - a.dur!);
  // Self time of each slice, attributed to its kind (or its nearest ancestor's).
  const kinds: Record<string, number> = {};
  const stack: { e: TraceEvent; end: number; kind: string; child: number }[] = [];
  let busy = 0;
  let cpu = 0;
  const pop = (until: number) => {
    while (stack.length && stack.at(-1)!.end <= until) {
      const s = stack.pop()!;
      const self = Math.max(0, s.e.dur! - s.child);
      kinds[s.kind] = (kinds[s.kind] ?? 0) + self / 1000;
    }
  };
  for (const e of slices) {
    pop(e.ts);
    const parent = stack.at(-1);
    if (parent) parent.child += e.dur!;
    else if (e.name === "RunTask" || e.name === "ThreadControllerImpl::RunTask") {
      busy += e.dur!;
      cpu += e.tdur ?? 0;
    }
    const kind = KIND[e.name] ?? (parent ? parent.kind : "other");
    stack.push({ e, end: e.ts + e.dur!, kind: KIND[e.name] ? kind : parent ? parent.kind : e.name === "RunTask" || e.name === "ThreadControllerImpl::RunTask" ? "other" : e.name, child: 0 });
  }
  pop(Infinity);
  for (const k of Object.keys(kinds)) kinds[k] = Math.round(kinds[k]!);
  return { kinds, busy: Math.round(busy / 1000), cpu: Math.round(cpu / 1000), interactiveTs, drawnTs, navTs };
}

async function main() {
  if (!chromiumPresent) throw new Error("no Chromium");
  const h = await startHearth({ env: { HEARTH_SIGNUP: "open", HEARTH_METERING: "off" } });
  // The full browser with V8's optimising compiler, which the tests leave off: what is timed here is a page as people's browsers run it.
  const browser = await launchChromium([], { timed: true });
  try {
    const who = await signUp(h, "bench");
    const paths = screensOf(h.rt).filter((s) => s.file).map((s) => s.href).filter((p) => !wanted.length || wanted.includes(p));
    const [name, value] = who.cookie.split("=");
    const warm = await browser.newContext();
    await warm.addCookies([{ name: name!, value: value!, url: h.url }]);
    const wp = await warm.newPage();
    for (const p of paths) await wp.goto(h.url + p);
    await warm.close();
    const loads = new Map<string, Load[]>(paths.map((p) => [p, []]));
    for (let run = 0; run < RUNS; run++) for (const p of paths) {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
      await context.addCookies([{ name: name!, value: value!, url: h.url }]);
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send("Emulation.setCPUThrottlingRate", { rate: 4 });
      await page.addInitScript(watchInteractive);
      const events: TraceEvent[] = [];
      cdp.on("Tracing.dataCollected", (d) => void events.push(...(d.value as unknown as TraceEvent[])));
      const done = new Promise<void>((r) => cdp.once("Tracing.tracingComplete", () => r()));
      if (!PLAIN) await cdp.send("Tracing.start", { categories: CATEGORIES, transferMode: "ReportEvents" });
      await page.goto(h.url + p);
      await page.waitForFunction(() => (window as unknown as { __interactive?: number }).__interactive !== undefined);
      const seen = await page.evaluate(() => ({
        interactive: (window as unknown as { __interactive: number }).__interactive,
        drawn: performance.getEntriesByName("drawn")[0]?.startTime ?? 0,
        resources: [
          { name: "document", start: 0, end: (performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming).responseEnd },
          ...(performance.getEntriesByType("resource") as PerformanceResourceTiming[]).map((r) => ({ name: new URL(r.name).pathname, start: r.startTime, end: r.responseEnd })),
        ],
      }));
      if (!PLAIN) {
        await cdp.send("Tracing.end");
        await done;
      }
      if (SAVE) {
        mkdirSync(SAVE, { recursive: true });
        writeFileSync(join(SAVE, `${p.replaceAll("/", "_")}-${run}.json`), JSON.stringify({ traceEvents: events }));
      }
      const s = PLAIN ? { kinds: {}, busy: 0, cpu: 0 } : summarize(events);
      loads.get(p)!.push({ interactive: Math.round(seen.interactive), drawn: Math.round(seen.drawn), kinds: s.kinds, busy: s.busy, cpu: s.cpu, resources: seen.resources.map((r) => ({ ...r, start: Math.round(r.start), end: Math.round(r.end) })) });
      await context.close();
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    for (const [p, ls] of loads) {
      const kinds = [...new Set(ls.flatMap((l) => Object.keys(l.kinds)))];
      const k = Object.fromEntries(kinds.map((n) => [n, median(ls.map((l) => l.kinds[n] ?? 0))]).sort((a, b) => (b[1] as number) - (a[1] as number)));
      console.log(`${p}: interactive ${median(ls.map((l) => l.interactive))} ms (runs ${ls.map((l) => l.interactive).join(", ")}), drawn ${median(ls.map((l) => l.drawn))}, main thread busy ${median(ls.map((l) => l.busy))} ms (runs ${ls.map((l) => l.busy).join(", ")}), its CPU time ${median(ls.map((l) => l.cpu))} ms (runs ${ls.map((l) => l.cpu).join(", ")})`);
      console.log(`  by kind (median ms): ${Object.entries(k).filter(([, v]) => (v as number) > 0).map(([n, v]) => `${n} ${v}`).join(", ")}`);
      const last = ls.find((l) => l.interactive === median(ls.map((x) => x.interactive))) ?? ls[0]!;
      console.log(`  network (median load): ${last.resources.map((r) => `${r.name.replace(/\.[0-9a-f]{16}\.js$/, ".js")} ${r.start}–${r.end}`).join("; ")}`);
    }
  } finally {
    await browser.close();
    await h.stop();
  }
}

await main();
