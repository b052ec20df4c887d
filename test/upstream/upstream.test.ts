import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { grantCredits } from "../../core/pay/grant.ts";
import { settle } from "../../core/upstream/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { indexFor } from "../../core/db/fts.ts";
import { sqlAll, sqlGet } from "../sql.ts";

// The probe provider: /thing answers {"n": <hits>} unless told to misbehave.
let mode: "ok" | "500" | "garbage" | "hang" | "503" | "shape" | "slow" = "ok";
let hits = 0;
const agents: string[] = [];
const fixture = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    hits++;
    agents.push(req.headers.get("user-agent") ?? "");
    if (mode === "500") return new Response("oops", { status: 500 });
    if (mode === "503") return new Response("busy", { status: 503 });
    if (mode === "garbage") return new Response("<html>not json", { headers: { "content-type": "text/html" } });
    if (mode === "shape") return Response.json({ m: 1 });
    if (mode === "hang") await new Promise((r) => setTimeout(r, 2000));
    if (mode === "slow") await new Promise((r) => setTimeout(r, 50));
    return Response.json({ n: hits });
  },
});

// A port that was open a moment ago and is closed now: connections are refused.
const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
const deadUrl = `http://127.0.0.1:${closed.port}`;
closed.stop(true);

const clock = new TestClock(new Date("2026-11-21T10:00:00Z").getTime());
let h: Hearth;
let token: string;
beforeAll(async () => {
  const base = `http://127.0.0.1:${fixture.port}`;
  h = await startHearth({
    clock,
    env: {
      HEARTH_PLUGINS: join(import.meta.dir, "plugins"),
      PROBE_URL: base,
      PROBE_LIMITED_URL: base,
      PROBE_DEAD_URL: deadUrl,
      PROBE_LIMITED_RATE: "1/60",
      PROBE_IMPATIENT_URL: base,
      // Only the provider a hang is tested on gives up soon: the others answer as late as a busy machine makes them.
      PROBE_IMPATIENT_TIMEOUT_MS: "200",
      UPSTREAM_RETRY_MS: "1",
      HEARTH_CONTACT: "ops@example.org",
      HEARTH_PUBLIC_URL: "https://hearth.example.org",
    },
  });
  token = await h.token("alice");
  await h.rt.store.write(() => grantCredits(h.rt.store.wdb, { username: "alice", amount: 100, by: "test", at: clock.now().getTime() }));
});
afterAll(async () => {
  await settle(h.rt);
  await h.stop();
  fixture.stop(true);
});

test("a fresh copy is fetched once, then served from cache without charge", async () => {
  mode = "ok";
  const before = hits;
  const a = await h.call("probe/get", { id: "a" }, { token });
  expect(a.status).toBe(200);
  expect(a.body.result).toMatchObject({ cached: false, age_seconds: 0, source: "Probe", as_of: "2026-11-21T10:00:00.000Z" });
  expect(agents.at(-1)).toBe("Hearth/0.1.0 (+https://hearth.example.org; ops@example.org)");
  clock.advance(30_000);
  // No token: the cached answer is free, so a stranger may have it.
  const b = await h.call("probe/get", { id: "a" });
  expect(b.status).toBe(200);
  expect(b.body.result).toMatchObject({ n: a.body.result.n, cached: true, age_seconds: 30 });
  expect(hits).toBe(before + 1);
  // An uncached one still costs a credit.
  expect([401, 402]).toContain((await h.call("probe/get", { id: "never" })).status);
});

test("the copy survives in the database", async () => {
  await settle(h.rt);
  const row = (await sqlGet(h.rt, "SELECT provider, url, status FROM upstream_cache WHERE url LIKE ?", "%id=a%")) as any;
  expect(row).toMatchObject({ provider: "PROBE", status: 200 });
});

test("a provider answering 500 is a 502; a stale copy answers instead when there is one", async () => {
  mode = "500";
  const r = await h.call("probe/get", { id: "fresh-500" }, { token });
  expect(r.status).toBe(502);
  expect(r.body.error).toMatchObject({ kind: "upstream_failed", retry: true });
  expect(r.body.error.message).toContain("HTTP 500");

  mode = "ok";
  const ok = await h.call("probe/get", { id: "s" }, { token });
  expect(ok.status).toBe(200);
  // Past ttl and the revalidation window, the provider fails: the last copy answers, marked stale.
  clock.advance(200_000);
  mode = "500";
  const stale = await h.call("probe/get", { id: "s" }, { token });
  expect(stale.status).toBe(200);
  expect(stale.body.result).toMatchObject({ n: ok.body.result.n, stale: true, cached: true, age_seconds: 200 });
  // Moments after a failure the copy answers without asking the provider again...
  const tried = hits;
  clock.advance(10_000);
  const resting = await h.call("probe/get", { id: "s" }, { token });
  expect(resting.body.result).toMatchObject({ stale: true, age_seconds: 210 });
  expect(hits).toBe(tried);
  // ...and half a minute on it is asked again (and fails again here).
  clock.advance(30_000);
  expect((await h.call("probe/get", { id: "s" }, { token })).body.result.stale).toBe(true);
  expect(hits).toBe(tried + 1);
  // Past what it keeps, the failure shows.
  clock.advance(4000_000);
  expect((await h.call("probe/get", { id: "s" }, { token })).status).toBe(502);
});

test("garbage is a 502 and is not cached", async () => {
  mode = "garbage";
  const r = await h.call("probe/get", { id: "g" }, { token });
  expect(r.status).toBe(502);
  expect(r.body.error.message).toContain("not JSON");
  mode = "ok";
  const before = hits;
  const good = await h.call("probe/get", { id: "g" }, { token });
  expect(good.status).toBe(200);
  expect(hits).toBe(before + 1);
});

test("a body in the wrong shape is a 502", async () => {
  mode = "shape";
  const r = await h.call("probe/get", { id: "w" }, { token });
  expect(r.status).toBe(502);
  expect(r.body.error.message).toContain("does not understand");
});

test("a 503 is retried once, then answers 503 upstream_unavailable", async () => {
  mode = "503";
  const before = hits;
  const r = await h.call("probe/get", { id: "u" }, { token });
  expect(r.status).toBe(503);
  expect(r.body.error).toMatchObject({ kind: "upstream_unavailable", retry: true });
  expect(hits).toBe(before + 2);
});

test("a POST is never sent twice: a 503 to it is the answer, since a failed connection may have delivered it", async () => {
  mode = "503";
  const before = hits;
  const r = await h.call("probe/post", { id: "p" }, { token });
  expect(r.status).toBe(503);
  expect(r.body.error).toMatchObject({ kind: "upstream_unavailable", retry: true });
  expect(hits).toBe(before + 1);
  mode = "ok";
});

test("a provider that does not answer in time is a 504", async () => {
  mode = "hang";
  const r = await h.call("probe/get", { id: "slow", provider: "PROBE_IMPATIENT" }, { token });
  expect(r.status).toBe(504);
  expect(r.body.error).toMatchObject({ kind: "upstream_timeout", retry: true });
  mode = "ok";
});

test("within the revalidation window the old copy answers at once and a refresh follows", async () => {
  mode = "ok";
  const first = await h.call("probe/get", { id: "r" }, { token });
  clock.advance(90_000);
  const second = await h.call("probe/get", { id: "r" });
  expect(second.status).toBe(200);
  expect(second.body.result).toMatchObject({ n: first.body.result.n, stale: true, cached: true });
  await settle(h.rt);
  const third = await h.call("probe/get", { id: "r" });
  expect(third.body.result.cached).toBe(true);
  expect(third.body.result.n).toBeGreaterThan(first.body.result.n);
  expect(third.body.result.stale).toBeUndefined();
});

test("a rate cap refuses past the quota with 503 and Retry-After", async () => {
  mode = "ok";
  const a = await h.call("probe/get", { id: "q1", provider: "PROBE_LIMITED" }, { token });
  expect(a.status).toBe(200);
  const b = await h.call("probe/get", { id: "q2", provider: "PROBE_LIMITED" }, { token });
  expect(b.status).toBe(503);
  expect(Number(b.headers.get("retry-after"))).toBeGreaterThan(0);
});

test("an unreachable provider is a 503 after one retry", async () => {
  const r = await h.call("probe/get", { id: "x", provider: "PROBE_DEAD" }, { token });
  expect(r.status).toBe(503);
  expect(r.body.error).toMatchObject({ kind: "upstream_unavailable", retry: true });
  expect(r.body.error.message).toContain("could not be reached");
});

test("callers asking for the same thing at once share one request", async () => {
  mode = "slow";
  const before = hits;
  const answers = await Promise.all([1, 2, 3].map(() => h.call("probe/get", { id: "together" }, { token })));
  mode = "ok";
  expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
  expect(new Set(answers.map((a) => a.body.result.n)).size).toBe(1);
  expect(hits).toBe(before + 1);
});

test("the cache outlives the process: a restarted instance answers from the database", async () => {
  mode = "ok";
  const first = await h.call("probe/get", { id: "durable" }, { token });
  expect(first.body.result.cached).toBe(false);
  await settle(h.rt);
  const again = await startHearth({
    clock,
    dataDir: h.dir,
    env: { HEARTH_PLUGINS: join(import.meta.dir, "plugins"), PROBE_URL: `http://127.0.0.1:${fixture.port}` },
  });
  try {
    const before = hits;
    const r = await again.call("probe/get", { id: "durable" });
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({ n: first.body.result.n, cached: true });
    expect(hits).toBe(before);
  } finally {
    await settle(again.rt);
    await again.stop();
  }
});

test("a fresh copy and what its provider's caller records with it are stored together, or neither is", async () => {
  mode = "ok";
  const stored = async (id: string) => ({
    cached: ((await sqlGet(h.rt, "SELECT count(*) AS n FROM upstream_cache WHERE url LIKE ?", `%id=${id}%`)) as { n: number }).n,
    indexed: (await indexFor(h.rt.store, "probe", true).indexed("thing")).has(id) ? 1 : 0,
  });
  expect((await h.call("probe/archive", { id: "kept" })).status).toBe(200);
  expect((await h.call("probe/archive", { id: "boom" })).status).toBe(200);
  await settle(h.rt);
  expect(await stored("kept")).toEqual({ cached: 1, indexed: 1 });
  // Indexing succeeded, then the record failed: the copy is not kept and the index entry is undone with it.
  expect(await stored("boom")).toEqual({ cached: 0, indexed: 0 });
});
