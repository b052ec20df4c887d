// one store: it runs on a PostgreSQL cluster of its own whichever the pass, so the PostgreSQL pass would only run it again the same
// The shared-state port on PostgreSQL alone (no Redis): counters, holds and
// claims raced from two instances on one database, failures that start
// again after a quiet spell, messages carried between instances however long,
// and what an instance does while its listening connection is gone.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { openShared } from "../../core/shared/index.ts";
import { LocalShared } from "../../core/shared/local.ts";
import { PgShared } from "../../core/shared/pg.ts";
import { pgBin, startPg } from "../pg.ts";
import { quiet, until } from "./redis.ts";



describe.skipIf(!pgBin("initdb"))("shared state in PostgreSQL", () => {
  let url: string;
  let db: SQL;
  let one: PgShared;
  let two: PgShared;
  beforeAll(async () => {
    url = await (await startPg()).database();
    db = new SQL({ url, max: 1 });
    one = new PgShared(url, quiet);
    two = new PgShared(url, quiet);
    expect(await until(() => one.heard && two.heard)).toBe(true);
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
    await db?.close();
  });

  test("two instances take turns from one bucket: raced, exactly a minute's worth is served, refilled as the clock moves", async () => {
    const now = 1_000_000;
    const waits = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? one : two).take("reads:addr", 5, now)));
    expect(waits.filter((w) => w === 0).length).toBe(5);
    // Empty: a turn comes back in 60/5 seconds.
    expect(waits.filter((w) => w > 0)).toEqual(Array(7).fill(12));
    expect(await one.take("reads:addr", 5, now + 6_000)).toBe(6);
    expect(await two.take("reads:addr", 5, now + 12_000)).toBe(0);
    expect(await one.take("reads:addr", 5, now + 12_000)).toBe(12);
    // Another key has a bucket of its own.
    expect(await one.take("reads:other", 5, now)).toBe(0);
  });

  test("holds and claims are decided in one place: raced from two instances, no more is held than the balance, and a claim is had once", async () => {
    const tries = Array.from({ length: 50 }, (_, i) => (i % 2 ? one : two).hold("acct", `call-${i}`, 1, 20));
    const others = await Promise.all(tries);
    expect(others.filter((n) => n + 1 <= 20).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(await one.hold("acct", "more", 1, 20)).toBe(20);
    const held = others.findIndex((n) => n === 0);
    one.unhold("acct", `call-${held}`, 1);
    expect(await until(async () => (await two.hold("acct", "after", 1, 20)) === 19)).toBe(true);
    expect(await two.hold("other", "x", 5, 5)).toBe(0);
    // A hold left by an instance that died lapses by itself.
    await db.unsafe("UPDATE hearth_shared_holds SET holds = jsonb_set(holds, '{x,1}', '0') WHERE account = 'other'");
    expect(await one.hold("other", "y", 5, 5)).toBe(0);

    const claims = await Promise.all([one.claim("auth-1", 60_000), two.claim("auth-1", 60_000), one.claim("auth-1", 60_000)]);
    expect(claims.filter(Boolean).length).toBe(1);
    one.unclaim("auth-1");
    expect(await until(() => two.claim("auth-1", 60_000))).toBe(true);
    // A claim is had again once its time is up.
    expect(await one.claim("short", 50)).toBe(true);
    expect(await two.claim("short", 50)).toBe(false);
    expect(await until(() => two.claim("short", 50))).toBe(true);
  });

  test("failures counted on either instance add up, start again after a quiet spell, and are forgiven for both", async () => {
    expect(await one.failures("alice@addr")).toBeNull();
    await one.fail("alice@addr", 1000, 60_000);
    await two.fail("alice@addr", 2000, 60_000);
    expect(await one.failures("alice@addr")).toEqual({ count: 2, last: 2000 });
    await one.fail("alice@addr", 2000 + 60_001, 60_000);
    expect(await two.failures("alice@addr")).toEqual({ count: 1, last: 62_001 });
    two.forgive("alice@addr");
    expect(await until(async () => (await one.failures("alice@addr")) === null)).toBe(true);
  });

  test("a message published on one instance reaches the other's subscribers and its own, each once and in order, past NOTIFY's 8000 bytes too", async () => {
    const got: string[] = [];
    const mine: string[] = [];
    const stop = two.subscribe("chat:garden", (m) => got.push(m));
    one.subscribe("chat:garden", (m) => mine.push(m));
    const long = "é".repeat(6000);
    one.publish("chat:garden", "first");
    one.publish("chat:garden", long);
    one.publish("chat:garden", "last");
    two.publish("chat:other", "not for this channel");
    expect(await until(() => got.length === 3 && mine.length === 3)).toBe(true);
    expect(got).toEqual(["first", long, "last"]);
    expect(mine).toEqual(got);
    stop();
    one.publish("chat:garden", "after");
    expect(await until(() => mine.length === 4)).toBe(true);
    expect(got.length).toBe(3);
  });

  test("a burst of messages, sent a batch to a statement, reaches the other instance whole and in order, a long one among them", async () => {
    const got: string[] = [];
    const stop = two.subscribe("chat:burst", (m) => got.push(m));
    const sent = Array.from({ length: 200 }, (_, i) => (i === 100 ? `${i} ${"ü".repeat(5000)}` : `${i} "quoted" \\ and ünïcode`));
    for (const m of sent) one.publish("chat:burst", m);
    expect(await until(() => got.length === sent.length)).toBe(true);
    expect(got).toEqual(sent);
    stop();
  });

  test("with its listening connection killed an instance is unheard, tells its own subscribers itself, and hears again once it reconnects", async () => {
    const changes = [[] as boolean[], [] as boolean[]];
    one.watch((h) => changes[0].push(h));
    two.watch((h) => changes[1].push(h));
    const got: string[] = [];
    one.subscribe("tokens", (m) => got.push(m));
    await db.unsafe("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'");
    expect(await until(() => !one.heard)).toBe(true);
    one.publish("tokens", "revoked while unheard");
    expect(got).toEqual(["revoked while unheard"]);
    expect(await until(() => changes.every((c) => c.length === 2) && one.heard && two.heard)).toBe(true);
    expect(changes).toEqual([
      [false, true],
      [false, true],
    ]);
    two.publish("tokens", "revoked after");
    expect(await until(() => got.includes("revoked after"))).toBe(true);
    await Bun.sleep(100);
    expect(got[0]).toBe("revoked while unheard");
    expect(got.filter((m) => m === "revoked after")).toEqual(["revoked after"]);
  });

  test("a listening connection that stays open but hears nothing is taken as lost, and a new one made", async () => {
    const listening = (await db.unsafe("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'")) as { pid: number }[];
    expect(listening.length).toBe(2);
    // Each notices on its own time and is unheard only until its new connection listens: the changes are what shows it.
    const changes = [[] as boolean[], [] as boolean[]];
    one.watch((h) => changes[0].push(h));
    two.watch((h) => changes[1].push(h));
    for (const { pid } of listening) process.kill(pid, "SIGSTOP");
    try {
      // Each made a new connection of its own and hears through it, the old ones still frozen.
      expect(await until(() => changes.every((c) => c.length === 2) && one.heard && two.heard)).toBe(true);
      expect(changes).toEqual([
        [false, true],
        [false, true],
      ]);
      const got: string[] = [];
      const stop = two.subscribe("tokens", (m) => got.push(m));
      one.publish("tokens", "heard again");
      expect(await until(() => got.length === 1)).toBe(true);
      stop();
    } finally {
      for (const { pid } of listening) process.kill(pid, "SIGCONT");
    }
  });

  test("an instance on PostgreSQL keeps shared state in its database unless HEARTH_SHARED=memory says it is alone; another value is refused by name", () => {
    const chosen = openShared({ HEARTH_DATABASE_URL: url }, quiet);
    const alone = openShared({ HEARTH_DATABASE_URL: url, HEARTH_SHARED: "memory" }, quiet);
    try {
      expect(chosen).toBeInstanceOf(PgShared);
      expect(alone).toBeInstanceOf(LocalShared);
      expect(openShared({}, quiet)).toBeInstanceOf(LocalShared);
      expect(() => openShared({ HEARTH_DATABASE_URL: url, HEARTH_SHARED: "redis" }, quiet)).toThrow(/HEARTH_SHARED is "redis": set it to database or memory/);
    } finally {
      chosen.close();
      alone.close();
    }
  });

  test("with the database unreachable an instance answers from its own memory at once and hears nothing", async () => {
    const closed = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = closed.port;
    closed.stop(true);
    const away = new PgShared(`postgres://postgres@127.0.0.1:${port}/gone`, quiet);
    try {
      expect(await away.take("reads:addr", 1, 1000)).toBe(0);
      expect(await away.take("reads:addr", 1, 1000)).toBe(60);
      expect(await away.hold("acct", "a", 3, 5)).toBe(0);
      expect(await away.hold("acct", "b", 3, 5)).toBe(3);
      away.unhold("acct", "a", 3);
      expect(await away.hold("acct", "c", 3, 5)).toBe(0);
      expect(await away.claim("pay-1", 60_000)).toBe(true);
      expect(await away.claim("pay-1", 60_000)).toBe(false);
      await away.fail("bob@addr", 1000, 60_000);
      expect(await away.failures("bob@addr")).toMatchObject({ count: 1, last: 1000 });
      const got: string[] = [];
      away.subscribe("tokens", (m) => got.push(m));
      away.publish("tokens", "revoked");
      expect(got).toEqual(["revoked"]);
      expect(away.heard).toBe(false);
    } finally {
      await away.close();
    }
  });

  test("lapsed rows are swept off the tables", async () => {
    await one.claim("gone", 1);
    await Bun.sleep(5);
    const count = async () => Number((await db.unsafe("SELECT count(*)::int AS n FROM hearth_shared_claims WHERE key = 'gone'"))[0].n);
    expect(await count()).toBe(1);
    expect(await until(async () => (await count()) === 0)).toBe(true);
  });
});
