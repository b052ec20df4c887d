// Three instances as separate processes (`hearth serve`) behind a
// round-robin proxy: one data folder (SQLite in WAL mode, shared by the
// processes) and one redis-server, or in the PostgreSQL pass one database
// and nothing else (the database carries what Redis would), one S3 bucket,
// all on loopback. What one
// instance does, the others see; what one instance holds, none exceeds; and
// an instance killed outright loses nothing it acknowledged, while its
// claimed firings are run by the others.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { signUp, type Signed } from "../auth/people.ts";
import { PgStore } from "../../core/db/pg.ts";
import { bound, dbEnv, plain, startHearth } from "../harness.ts";
import { startS3 } from "../s3.ts";
import { REDIS_SERVER, startRedis, type Redis } from "./redis.ts";
import { freePort } from "../ports.ts";

const ROOT = join(import.meta.dir, "..", "..");
const PLUGINS = join(import.meta.dir, "plugins");
const CREDITS = 20;

interface Instance {
  url: string;
  proc: ReturnType<typeof Bun.spawn>;
  alive: boolean;
}

/** A `hearth serve` process on its own loopback port, answering once started. */
async function spawnInstance(env: Record<string, string>): Promise<Instance> {
  const port = await freePort();
  const proc = Bun.spawn(["bun", join(ROOT, "core/cli/main.ts"), "serve"], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdout: "ignore",
    stderr: "ignore",
  });
  const url = `http://127.0.0.1:${port}`;
  // However long a busy machine takes to start it; one that exits instead is told at once.
  for (;;) {
    const ok = await fetch(`${url}/api/v1/chat/rooms`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { url, proc, alive: true };
    if (proc.exitCode !== null) throw new Error(`instance on port ${port} exited with ${proc.exitCode} before it answered`);
    await Bun.sleep(50);
  }
}

/** A load balancer in miniature: each request to the next instance in turn, passing over those that refuse connections. */
function startProxy(instances: Instance[]) {
  let turn = 0;
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(req) {
      const u = new URL(req.url);
      const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer();
      const headers = new Headers(req.headers);
      headers.delete("accept-encoding");
      for (let tries = 0; tries < instances.length; tries++) {
        const target = instances[turn++ % instances.length];
        try {
          return await fetch(target.url + u.pathname + u.search, { method: req.method, headers, body, redirect: "manual" });
        } catch (e) {
          // Refused: nothing was sent, so another instance may take it. Anything else may have run.
          if ((e as { code?: string }).code !== "ECONNREFUSED") return new Response("bad gateway", { status: 502 });
        }
      }
      return new Response("no instance answered", { status: 502 });
    },
  });
}

/** A paid provider on loopback: slow enough that calls overlap, counting every request it serves and noting which call each was for. */
function startProvider() {
  const served = { count: 0, calls: [] as string[] };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      served.count++;
      served.calls.push(new URL(req.url).searchParams.get("n") ?? "");
      await Bun.sleep(300);
      return Response.json({ n: new URL(req.url).searchParams.get("n") });
    },
  });
  return { served, server };
}

async function call(base: string, path: string, args: Record<string, unknown>, token: string, method: "GET" | "POST" = "POST") {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  let url = `${base}/api/v1/${path}`;
  let body: string | undefined;
  if (method === "GET") url += `?${new URLSearchParams(Object.entries(args).map(([k, v]) => [k, String(v)]))}`;
  else {
    headers["content-type"] = "application/json";
    body = JSON.stringify(args);
  }
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  let json: any = text;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, body: json };
}

/** A JSON POST to one of alice's session pages (/token, /token/revoke) on one instance. */
async function asAlice(base: string, path: string, body: unknown, alice: Signed) {
  const res = await fetch(base + path, { method: "POST", headers: { "content-type": "application/json", cookie: alice.cookie, "x-csrf-token": alice.csrf }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

/** Runs fn over items, at most `width` at once. */
async function pool<T, R>(items: T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]);
      }
    }),
  );
  return out;
}

/**
 * Polls until check holds; past `ms` it fails saying what it waited for. Infinity where only the load decides how long
 * it takes (the runner's per-test limit still ends a wait that never holds): a busy machine must make it slower, not red.
 * Those waits, on a thousand firings, read them all each time: every quarter second, not twenty times a second.
 */
async function until(ms: number, check: () => boolean | Promise<boolean>, what: string) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await Bun.sleep(ms === Infinity ? 250 : 50);
  }
}

/** The next whole second at least `ms` from now (events are due on whole seconds). */
const secondAfter = (ms: number) => Math.ceil((Date.now() + ms) / 1000) * 1000;

/** On PostgreSQL the instances share limits, holds and messages through the database alone. */
const ON_PG = process.env.HEARTH_TEST_DB === "pg";

describe.skipIf(!ON_PG && !REDIS_SERVER)("three instances behind one proxy", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-scale-"));
  let redis: Redis | undefined;
  let s3: Awaited<ReturnType<typeof startS3>>;
  let provider: ReturnType<typeof startProvider>;
  let instances: Instance[];
  let proxy: ReturnType<typeof startProxy>;
  /** Reads the instances' database from outside them: the SQLite file read-only, or a small pool on the PostgreSQL database. */
  let look: <T>(text: string) => Promise<T[]>;
  let closeLook: () => void | Promise<void> = () => {};
  let alice: Signed;
  let bob: string;
  const via = () => proxy.url.origin;

  beforeAll(async () => {
    [redis, s3] = await Promise.all([ON_PG ? undefined : startRedis(), startS3()]);
    provider = startProvider();
    const settings = join(dataDir, "..", `${dataDir.split("/").pop()}.env`);
    writeFileSync(settings, "");
    const env: Record<string, string> = {
      HEARTH_CONFIG: settings,
      HEARTH_DATA: dataDir,
      HEARTH_LOG: "off",
      HEARTH_COLLECTORS: "off",
      ...(redis ? { HEARTH_REDIS_URL: redis.url } : {}),
      ...s3.env(),
      HEARTH_PLUGINS: PLUGINS,
      PAID_TEST_URL: `http://127.0.0.1:${provider.server.port}`,
      HEARTH_METER_ACCOUNTS: "on",
      HEARTH_RATE_READS: "0",
      HEARTH_RATE_WRITES: "0",
      HEARTH_RATE_PRICED: "0",
      // Short leases, so a dead instance's firings are taken over within seconds, but long enough that a loaded machine's
      // pauses do not pass for a death: at 3 s, three processes firing a burst on a busy machine renewed late, and the
      // firings they still held were run again by the others.
      HEARTH_SCHEDULE_LEASE_SECONDS: "20",
      ...(await dbEnv(dataDir)),
    };
    // Accounts and credits are made once, before the instances start on the same data folder.
    const setup = await startHearth({ dataDir, env });
    alice = await signUp(setup, "alice");
    bob = await setup.token("bob");
    await setup.grant("bob", CREDITS);
    await setup.stop();
    instances = await Promise.all([0, 1, 2].map(() => spawnInstance(env)));
    proxy = startProxy(instances);
    if (env.HEARTH_DATABASE_URL) {
      const pg = new PgStore(env.HEARTH_DATABASE_URL, { max: 2 });
      look = async <T>(text: string) => ((await pg.rdb.all(bound(text, []))) as unknown[]).map(plain) as T[];
      closeLook = () => pg.close();
    } else {
      const db = new Database(join(dataDir, "hearth.db"), { readonly: true });
      look = async <T>(text: string) => db.query(text).all() as T[];
      closeLook = () => db.close();
    }
  });

  afterAll(async () => {
    await closeLook();
    proxy?.stop(true);
    for (const i of instances ?? []) {
      i.proc.kill(9);
      await i.proc.exited;
    }
    provider?.server.stop(true);
    await Promise.all([redis?.stop(), s3?.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(`${dataDir}.env`, { force: true });
  });

  test("a file put through one instance is read through another, and through the proxy", async () => {
    const put = await call(instances[0].url, "files/put", { name: "plan.txt", content: "plant the beans in May" }, bob);
    expect(put.status).toBe(200);
    const id = put.body.result.id;
    for (const base of [instances[1].url, instances[2].url, via()]) {
      const got = await call(base, "files/get", { id }, bob, "GET");
      expect(got.status).toBe(200);
      expect(got.body.result.content).toBe("plant the beans in May");
    }
    // The bytes are in the bucket, not in any instance's folder.
    expect((await s3.keys()).length).toBeGreaterThan(0);
  });

  test("a token revoked through one instance is refused by the others long before their cache of it runs out", async () => {
    const made = await asAlice(instances[0].url, "/token", { name: "tablet" }, alice);
    expect(made.status).toBe(200);
    const { token, id } = made.body.result;
    // Each instance has the token cached from a call of its own.
    for (const i of instances) expect((await call(i.url, "notes/list", {}, token, "GET")).status).toBe(200);
    expect((await asAlice(instances[1].url, "/token/revoke", { id }, alice)).status).toBe(200);
    const refusedBy = async (i: Instance) => (await call(i.url, "notes/list", {}, token, "GET")).status === 401;
    // The revocation is told to every instance; the tokens they cached would last 30 s. A busy machine may take a
    // while to pass the word on, but only the word, not the cache running out, makes them refuse within 10 s.
    await until(10_000, async () => (await Promise.all(instances.map(refusedBy))).every(Boolean), "every instance refuses the revoked token");
  });

  test(`50 concurrent charges against ${CREDITS} credits: exactly ${CREDITS} are served, and no call runs that could not be paid`, async () => {
    const before = provider.served.calls.length;
    const answers = await Promise.all(Array.from({ length: 50 }, (_, n) => call(via(), "paid/work", { n }, bob, "GET")));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200).length).toBe(CREDITS);
    expect(statuses.filter((s) => s === 402).length).toBe(50 - CREDITS);
    // Credits held on one instance are held on all: the provider served exactly the calls charged. Counted by call,
    // not by request: a GET whose connection failed on a loaded machine is sent once more, and is still the one call.
    const paid = answers.flatMap((a, n) => (a.status === 200 ? [String(n)] : [])).sort();
    expect([...new Set(provider.served.calls.slice(before))].sort()).toEqual(paid);
    const balance = await call(via(), "credits/balance", {}, bob, "GET");
    expect(balance.body.result.balance).toBe(0);
  });

  /**
   * Makes `count` events through the proxy, due from a whole second `lead` ms ahead (`when` spreads them from
   * there), all made more than `margin` ms before that second. Making them takes what the machine gives: when it ran
   * later, they are made again, further ahead and titled `${name} <round>.<n>` apart from earlier rounds, once every
   * event of those rounds has fired, so that only this round is left due.
   */
  async function ahead(name: string, count: number, lead: number, margin: number, when: (start: number, i: number) => number) {
    for (let round = 1; ; round++) {
      const began = Date.now();
      const start = secondAfter(lead);
      const made = await pool(
        Array.from({ length: count }, (_, i) => ({ title: `${name} ${round}.${i}`, when: new Date(when(start, i)).toISOString() })),
        16,
        // A write the instance says was not made and may be sent again (three processes taking turns at one
        // SQLite file can wait past its busy timeout on a loaded machine) is sent again, as a client would.
        async (t) => {
          for (;;) {
            const r = await call(via(), "events/create", t, bob);
            if (r.status !== 503 || r.body?.error?.retry !== true) return r;
          }
        },
      );
      expect(made.filter((m) => m.status !== 200).map((m) => m.body)).toEqual([]);
      const ids = made.map((m) => m.body.result.id as string);
      if (Date.now() < start - margin) return { ids, start, round };
      lead += 2 * (Date.now() - began);
      const late = new Set(ids);
      const recorded = async () => (await look<{ ref: string; status: string }>("SELECT ref, status FROM schedule_firings WHERE service = 'events'")).filter((f) => late.has(f.ref) && f.status !== "claimed").length === late.size;
      await until(Infinity, recorded, `every event of a round made too late has fired`);
    }
  }

  test("1,000 events due within a minute each fire exactly once across the three instances", async () => {
    // Far enough ahead that making them all (through three processes writing one database) ends first.
    // 100 events fall due on each of ten seconds.
    const burst = await ahead("burst", 1000, 12_000, 0, (start, i) => start + Math.floor(i / 100) * 1000);
    expect(Date.now()).toBeLessThan(burst.start);
    const mine = new Set(burst.ids);
    const firings = async () => (await look<{ ref: string; status: string; owner: string | null }>("SELECT ref, status, owner FROM schedule_firings WHERE service = 'events'")).filter((f) => mine.has(f.ref));
    await until(Infinity, async () => (await firings()).filter((f) => f.status === "done").length >= 1000, "every firing is done");
    // Each firing mailed its reminder once: two instances running one firing would have mailed it twice.
    const reminders = await look<{ subject: string; n: number }>(`SELECT subject, count(*) AS n FROM mail_messages WHERE folder = 'inbox' AND subject LIKE 'Reminder: burst ${burst.round}.%' GROUP BY subject`);
    expect(reminders.length).toBe(1000);
    expect(reminders.filter((r) => r.n !== 1)).toEqual([]);
    const ours = await firings();
    expect(ours.length).toBe(1000);
    // The work was shared: more than one instance ran firings.
    expect(new Set(ours.map((f) => f.owner)).size).toBeGreaterThan(1);
  });

  test("an instance killed (SIGKILL) mid-run loses no write it acknowledged, and the others run the firings it had claimed", async () => {
    const [a, b, victim] = instances;
    const made = await ahead("crash", 300, 5_000, 300, (start) => start);
    const due = made.start;
    const ids = new Set(made.ids);
    // The other two are paused over the due time, so the firings are claimed by the victim, which then dies holding them.
    // They are paused at once (nothing else needs them until then), not at a moment a busy machine could overshoot.
    a.proc.kill("SIGSTOP");
    b.proc.kill("SIGSTOP");
    expect(Date.now()).toBeLessThan(due - 300);
    await Bun.sleep(Math.max(0, due - Date.now() - 300));
    const acknowledged: string[] = [];
    let writing = true;
    const writer = (async () => {
      for (let n = 0; writing; n++) {
        const r = await call(victim.url, "notes/add", { title: `acked ${n}`, text: `written before the crash (${n})` }, bob).catch(() => null);
        if (r?.status === 200) acknowledged.push(`acked ${n}`);
        if (!r) return;
      }
    })();
    const claimed = () => look<{ ref: string; owner: string }>("SELECT ref, owner FROM schedule_firings WHERE service = 'events' AND status = 'claimed'");
    let held: { ref: string; owner: string }[] = [];
    try {
      // However late a loaded machine makes it: the victim claims its share once they are due.
      while (!(await claimed()).length) await Bun.sleep(5);
      victim.proc.kill(9);
      victim.alive = false;
      await victim.proc.exited;
      writing = false;
      await writer;
      held = await claimed();
    } finally {
      a.proc.kill("SIGCONT");
      b.proc.kill("SIGCONT");
    }
    const dead = new Set(held.map((h) => h.owner));
    expect(dead.size).toBe(1);
    expect(held.length).toBeGreaterThan(0);
    expect(acknowledged.length).toBeGreaterThan(0);

    const state = async () => (await look<{ ref: string; status: string; owner: string }>("SELECT ref, status, owner FROM schedule_firings WHERE service = 'events'")).filter((f) => ids.has(f.ref));
    await until(
      Infinity,
      async () => {
        const now = await state();
        return now.length === 300 && now.every((f) => f.status === "done");
      },
      "every crash firing is done",
    );
    const byRef = new Map((await state()).map((f) => [f.ref, f]));
    for (const h of held) expect(byRef.get(h.ref)!.owner).not.toBe(h.owner);
    // Every write the victim acknowledged is there, read through the survivors.
    const notes = await call(via(), "notes/list", {}, bob, "GET");
    expect(notes.status).toBe(200);
    const titles = new Set((notes.body.result as { title: string }[]).map((n) => n.title));
    expect(acknowledged.filter((t) => !titles.has(t))).toEqual([]);
  });
});
