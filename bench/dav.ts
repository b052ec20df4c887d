// CalDAV figures, against a `hearth serve` process of its own:
//  1. One event's GET and PUT with 100 and with 10,000 events in the
//     calendar: p50/p99 ms of each, which should not grow with the calendar.
//     The ratio of the two (10,000 over 100) is the figure to hold: at most 1.5.
//  2. A phone's first sync: 5,000 events PUT four at a time to an instance
//     with the default settings (rate limits on), on SQLite and on PostgreSQL:
//     how long, CPU per PUT (the server's, and PostgreSQL's), how answered.
//  3. 20 bodies of 24 MiB sent at once to /dav/ and to /files/dav/: the
//     server's RSS before, at its highest while they arrive, and after, and
//     how the bodies were answered.
//  4. A daily series begun in 2000, first asked about in 2026 (bench/series.ts):
//     CPU ms of a week's REPORT, the next firing and events/free's spans.
// `bun bench/dav.ts` prints a table; benchDav() returns the numbers.
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchPg } from "../test/pg.ts";
import { cpuUs, freePort, rssMb, treeCpuUs, waitFor200 } from "./lib.ts";
import { benchSeries, seriesTable, type SeriesBench } from "./series.ts";

const root = join(import.meta.dir, "..");
const cli = (args: string[]) => ["bun", "-e", `import { main } from ${JSON.stringify(join(root, "core/cli/main.ts"))}; process.exit(await main(${JSON.stringify(args)}));`];

export interface FirstSync {
  store: "sqlite" | "postgres";
  events: number;
  seconds: number;
  perSecond: number;
  statuses: Record<string, number>;
  /** CPU of the server process per PUT, and of PostgreSQL's processes (0 on SQLite). */
  cpuMsPerPut: number;
  dbCpuMsPerPut: number;
}

export interface DavBench {
  items: { events: number; getMs: { p50: number; p99: number }; putMs: { p50: number; p99: number } }[];
  /** p50 with the larger calendar over p50 with the smaller. */
  ratio: { get: number; put: number };
  firstSync: FirstSync[];
  bodies: { path: string; bodies: number; mib: number; rssBeforeMB: number; rssPeakMB: number; rssAfterMB: number; statuses: Record<string, number> }[];
  series: SeriesBench[];
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor(q * s.length))] * 100) / 100;
};

const vevent = (uid: string, summary: string) =>
  ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Bench//EN", "BEGIN:VEVENT", `UID:${uid}`, "DTSTAMP:20260301T000000Z", "DTSTART:20270302T090000Z", "DURATION:PT45M", `SUMMARY:${summary}`, "END:VEVENT", "END:VCALENDAR", ""].join("\r\n");

/** limits: keep the instance's default rate limits, as a person's instance has them; db: a PostgreSQL database's URL (else SQLite). */
async function instance(limits = false, db?: string) {
  const dir = mkdtempSync(join(tmpdir(), "hearth-bench-dav-"));
  const off = limits ? {} : { HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0", HEARTH_RATE_PRICED: "0" };
  const env = { ...process.env, HEARTH_DATA: dir, HEARTH_LOG: "off", HOST: "127.0.0.1", HEARTH_METERING: "off", ...off, HEARTH_COLLECTORS: "off", ...(db ? { HEARTH_DATABASE_URL: db } : {}) };
  const token = new TextDecoder().decode(Bun.spawnSync(cli(["token", "create", "--user", "bench"]), { env }).stdout).trim();
  const port = freePort();
  const proc = Bun.spawn(cli(["serve"]), { env: { ...env, PORT: String(port) }, stdout: "ignore", stderr: "inherit" });
  const base = `http://127.0.0.1:${port}`;
  await waitFor200(`${base}/health`, 60_000);
  const auth = `Basic ${Buffer.from(`bench:${token}`).toString("base64")}`;
  return {
    dir,
    base,
    proc,
    token,
    auth,
    async stop() {
      proc.kill();
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An instance with `n` events in its calendar, named by a client's first sync; one() times one GET and one PUT on it. */
async function calendarOf(n: number) {
  const h = await instance();
  const made = await fetch(`${h.base}/api/v1/events/create`, { method: "POST", headers: { authorization: `Bearer ${h.token}`, "content-type": "application/json" }, body: JSON.stringify({ title: "Seed", when: "2027-03-02T09:00:00Z" }) });
  const id = ((await made.json()) as { result: { id: string } }).result.id;
  // The rest are copies of the first, written straight into the events table.
  const db = new Database(join(h.dir, "hearth.db"));
  db.run("PRAGMA busy_timeout = 10000");
  const cols = (db.query("PRAGMA table_info(events_events)").all() as { name: string }[]).map((c) => c.name);
  const copy = db.prepare(`INSERT INTO events_events (${cols.join(", ")}) SELECT ${cols.map((c) => (c === "id" ? "?" : c === "title" ? "?" : c)).join(", ")} FROM events_events WHERE id = ?`);
  db.transaction(() => {
    for (let i = 1; i < n; i++) copy.run(`${id}-${i}`, `Seed ${i}`, id);
  })();
  db.close();
  const dav = (method: string, path: string, body?: string) => fetch(`${h.base}/dav/calendars/bench/events/${path}`, { method, body, headers: { authorization: h.auth, depth: "1" } });
  // A client's first sync: every event gets its name.
  await (await dav("PROPFIND", "")).text();
  const get: number[] = [];
  const put: number[] = [];
  return {
    n,
    h,
    async one(i: number) {
      let t = performance.now();
      const g = await dav("GET", `${id}-${(i % (n - 1)) + 1}.ics`);
      await g.text();
      get.push(performance.now() - t);
      if (g.status !== 200) throw new Error(`GET: ${g.status}`);
      t = performance.now();
      const p = await dav("PUT", `bench-${i % 10}.ics`, vevent(`bench-${i % 10}`, `Bench ${i}`));
      put.push(performance.now() - t);
      if (p.status >= 300) throw new Error(`PUT: ${p.status} ${await p.text()}`);
    },
    reset() {
      get.length = 0;
      put.length = 0;
    },
    figures: () => ({ events: n, getMs: { p50: quantile(get, 0.5), p99: quantile(get, 0.99) }, putMs: { p50: quantile(put, 0.5), p99: quantile(put, 0.99) } }),
  };
}

/**
 * Times one event's GET and PUT with each calendar size. The instances run
 * side by side and take turns, request by request, so a busy machine slows
 * both alike and the ratio between them stands.
 */
async function itemCosts(sizes: number[], rounds: number) {
  const cals: Awaited<ReturnType<typeof calendarOf>>[] = [];
  try {
    for (const n of sizes) cals.push(await calendarOf(n));
    // A few rounds each first, so neither is timed while the runtime warms up.
    for (let i = 0; i < 5; i++) for (const c of cals) await c.one(i);
    for (const c of cals) c.reset();
    for (let i = 5; i < rounds + 5; i++) for (const c of i % 2 ? cals : [...cals].reverse()) await c.one(i);
    return cals.map((c) => c.figures());
  } finally {
    for (const c of cals) await c.h.stop();
  }
}

const p2 = (n: number) => String(n).padStart(2, "0");
/** An event a day in London time; every tenth a series as a phone writes it (every other week, six times, its first date left out). */
const phoneEvent = (i: number) => {
  const day = new Date(Date.UTC(2027, 0, 1) + (i % 365) * 86_400_000);
  const start = `${day.getUTCFullYear()}${p2(day.getUTCMonth() + 1)}${p2(day.getUTCDate())}T${p2(8 + (i % 10))}0000`;
  const series = i % 10 === 0 ? ["RRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=6", `EXDATE;TZID=Europe/London:${start}`] : [];
  return ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Bench//EN", "BEGIN:VEVENT", `UID:e${i}`, "DTSTAMP:20260301T000000Z", `DTSTART;TZID=Europe/London:${start}`, "DURATION:PT45M", `SUMMARY:Event ${i}`, ...series, "END:VEVENT", "END:VCALENDAR", ""].join("\r\n");
};

/**
 * A first sync of `n` events, four PUTs at a time as a phone's sync runs, to
 * an instance with the default limits, on SQLite or on PostgreSQL (a cluster
 * of its own): how long, and the CPU each PUT took of the server and of the
 * database's processes.
 */
async function firstSync(n: number, store: "sqlite" | "postgres" = "sqlite") {
  const pg = store === "postgres" ? await launchPg() : null;
  const h = await instance(true, pg ? await pg.database() : undefined);
  const cpu0 = cpuUs(h.proc.pid);
  const db0 = pg ? treeCpuUs(pg.pid()) : 0;
  try {
    const headers = { authorization: h.auth, "content-type": "text/calendar", "if-none-match": "*" };
    const statuses: Record<string, number> = {};
    let next = 0;
    const t = performance.now();
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let i = next++; i < n; i = next++) {
          const r = await fetch(`${h.base}/dav/calendars/bench/events/e${i}.ics`, { method: "PUT", body: phoneEvent(i), headers });
          await r.arrayBuffer();
          statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        }
      }),
    );
    const seconds = Math.round((performance.now() - t) / 100) / 10;
    const perPut = (us: number) => Math.round(us / n / 10) / 100;
    return { store, events: n, seconds, perSecond: Math.round(n / seconds), statuses, cpuMsPerPut: perPut(cpuUs(h.proc.pid) - cpu0), dbCpuMsPerPut: pg ? perPut(treeCpuUs(pg.pid()) - db0) : 0 };
  } finally {
    await h.stop();
    pg?.stop();
  }
}

/** Sends `count` bodies of `mib` MiB at once to `path` and reads the server's RSS before, during and after. */
async function bodies(path: string, count: number, mib: number) {
  const h = await instance();
  try {
    const before = rssMb(h.proc.pid);
    const body = new Uint8Array(mib * 1024 * 1024).fill(0x61);
    // The highest RSS seen while the bodies arrive, looked at every 20 ms.
    let peak = before;
    const look = setInterval(() => (peak = Math.max(peak, rssMb(h.proc.pid))), 20);
    const answers = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        fetch(`${h.base}${path}big-${i}.${path.startsWith("/dav/") ? "ics" : "bin"}`, { method: "PUT", body, headers: { authorization: h.auth } })
          .then(async (r) => (await r.arrayBuffer(), String(r.status)))
          .catch((e) => `error: ${(e as Error).message.slice(0, 40)}`),
      ),
    );
    clearInterval(look);
    const after = rssMb(h.proc.pid);
    peak = Math.max(peak, after);
    const statuses: Record<string, number> = {};
    for (const a of answers) statuses[a] = (statuses[a] ?? 0) + 1;
    return { path, bodies: count, mib, rssBeforeMB: before, rssPeakMB: peak, rssAfterMB: after, statuses };
  } finally {
    await h.stop();
  }
}

/** BENCH_DAV_PARTS (items, sync, syncpg, bodies, series; comma-separated) runs some of the figures; all by default. */
const parts = (process.env.BENCH_DAV_PARTS ?? "items,sync,syncpg,bodies,series").split(",").map((s) => s.trim());

export async function benchDav(): Promise<DavBench> {
  const rounds = Number(process.env.BENCH_DAV_ROUNDS ?? 50);
  const items = parts.includes("items") ? await itemCosts([100, 10_000], rounds) : [];
  const ratio = items.length ? { get: Math.round((items[1].getMs.p50 / items[0].getMs.p50) * 100) / 100, put: Math.round((items[1].putMs.p50 / items[0].putMs.p50) * 100) / 100 } : { get: NaN, put: NaN };
  const events = Number(process.env.BENCH_DAV_FIRST_SYNC ?? 5000);
  const sync: FirstSync[] = [];
  if (parts.includes("sync")) sync.push(await firstSync(events));
  if (parts.includes("syncpg")) sync.push(await firstSync(events, "postgres"));
  const big = parts.includes("bodies") ? [await bodies("/dav/calendars/bench/events/", 20, 24), await bodies("/files/dav/", 20, 24)] : [];
  const series = parts.includes("series") ? await benchSeries() : [];
  return { items, ratio, firstSync: sync, bodies: big, series };
}

export function davTable(r: DavBench): string {
  const lines = r.items.length ? ["events in calendar | GET p50 / p99 ms | PUT p50 / p99 ms"] : [];
  for (const i of r.items) lines.push(`${i.events} | ${i.getMs.p50} / ${i.getMs.p99} | ${i.putMs.p50} / ${i.putMs.p99}`);
  if (r.items.length) lines.push(`${r.items[1].events} over ${r.items[0].events} (p50, target at most 1.5x) | ${r.ratio.get}x | ${r.ratio.put}x`);
  for (const fs of r.firstSync)
    lines.push(
      `first sync of ${fs.events} events on ${fs.store}, default limits, 4 at a time: ${fs.seconds} s (${fs.perSecond}/s), CPU per PUT ${fs.cpuMsPerPut} ms server${fs.store === "postgres" ? ` + ${fs.dbCpuMsPerPut} ms PostgreSQL` : ""}; answers ${Object.entries(fs.statuses).map(([k, v]) => `${v}x ${k}`).join(", ")}`,
    );
  for (const b of r.bodies)
    lines.push(`${b.bodies} concurrent ${b.mib} MiB bodies to ${b.path}: RSS ${b.rssBeforeMB} -> ${b.rssAfterMB} MB (peak ${b.rssPeakMB}); answers ${Object.entries(b.statuses).map(([k, v]) => `${v}x ${k}`).join(", ")}`);
  if (r.series.length) lines.push(seriesTable(r.series));
  return lines.join("\n");
}

if (import.meta.main) console.log(davTable(await benchDav()));
