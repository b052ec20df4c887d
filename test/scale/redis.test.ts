// The shared-state port on a real redis-server: counters and their windows,
// holds and claims raced from two instances, revocations and chat messages
// carried between instances, and what an instance does while Redis is away
// and once it is back.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RedisShared } from "../../core/shared/redis.ts";
import { post, signUp, type Signed } from "../auth/people.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { quiet, REDIS_SERVER, startRedis, until, type Redis } from "./redis.ts";



/** Reads server-sent message events until one with this content arrives or the stream ends. */
async function heard(res: Response, content: string): Promise<boolean> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return false;
      buf += decoder.decode(value, { stream: true });
      if (buf.includes(JSON.stringify(content))) return true;
    }
  } finally {
    await reader.cancel();
  }
}

describe.skipIf(!REDIS_SERVER)("shared state in Redis", () => {
  let redis: Redis;
  let client: RedisClient;
  beforeAll(async () => {
    redis = await startRedis();
    client = new RedisClient(redis.url);
    await client.connect();
  });
  afterAll(async () => {
    client.close();
    await redis.stop();
  });

  test("two instances take turns from one bucket per caller: refused by either once it is empty, served again a window later", async () => {
    const clock = new TestClock();
    const env = { HEARTH_REDIS_URL: redis.url, HEARTH_RATE_READS: "4" };
    const a = await startHearth({ clock, env });
    const b = await startHearth({ clock, env });
    try {
      await until(() => a.rt.shared.heard && b.rt.shared.heard);
      // A stranger's reads count against its address, on whichever instance they land.
      const statuses = [];
      for (const h of [a, b, a, b, a, b]) statuses.push((await h.call("chat/rooms")).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
      const refused = await b.call("chat/rooms");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      // The bucket is a key in Redis that lapses by itself once it would be full again.
      const keys = await client.keys("hearth:rate:*");
      expect(keys.length).toBe(1);
      expect(await client.pttl(keys[0])).toBeGreaterThan(0);
      expect(await client.pttl(keys[0])).toBeLessThanOrEqual(60_000);
      clock.advance(15_000);
      expect((await b.call("chat/rooms")).status).toBe(200);
      expect((await a.call("chat/rooms")).status).toBe(429);
      clock.advance(60_000);
      for (const h of [a, b, a, b]) expect((await h.call("chat/rooms")).status).toBe(200);
    } finally {
      await a.stop();
      await b.stop();
      await client.del(...(await client.keys("hearth:rate:*")));
    }
  });

  test("holds and claims are decided in one place: raced from two instances, no more is held than the balance, and a claim is had once", async () => {
    const one = new RedisShared(redis.url, quiet);
    const two = new RedisShared(redis.url, quiet);
    try {
      await until(() => one.heard && two.heard);
      // Each answer is what the other calls held: a hold is made when 1 more still fits in 20.
      const tries = Array.from({ length: 50 }, (_, i) => (i % 2 ? one : two).hold("acct", `call-${i}`, 1, 20));
      const others = await Promise.all(tries);
      expect(others.filter((n) => n + 1 <= 20).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      expect(await one.hold("acct", "more", 1, 20)).toBe(20);
      // Letting a hold go frees its credits for the other instance.
      const held = others.findIndex((n) => n === 0);
      one.unhold("acct", `call-${held}`, 1);
      expect(await until(async () => (await two.hold("acct", "after", 1, 20)) === 19)).toBe(true);
      expect(await two.hold("other", "x", 5, 5)).toBe(0);

      const claims = await Promise.all([one.claim("auth-1", 60_000), two.claim("auth-1", 60_000), one.claim("auth-1", 60_000)]);
      expect(claims.filter(Boolean).length).toBe(1);
      one.unclaim("auth-1");
      expect(await until(() => two.claim("auth-1", 60_000))).toBe(true);
    } finally {
      one.close();
      two.close();
    }
  });

  describe("two instances on one database", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "hearth-shared-"));
    let a: Hearth;
    let b: Hearth;
    let alice: Signed;
    beforeAll(async () => {
      const env = { HEARTH_REDIS_URL: redis.url, HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" };
      a = await startHearth({ dataDir, env });
      b = await startHearth({ dataDir, env });
      alice = await signUp(a, "alice");
      await until(() => a.rt.shared.heard && b.rt.shared.heard);
    });
    afterAll(async () => {
      await a.stop();
      await b.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    /** A new token made through instance a's /token, as a browser would. */
    async function newToken(): Promise<{ token: string; id: string }> {
      const r = await post(a, "/token", { name: "phone" }, { cookie: alice.cookie, "x-csrf-token": alice.csrf });
      expect(r.status).toBe(200);
      return r.body.result;
    }
    const revoke = async (id: string) =>
      expect((await post(a, "/token/revoke", { id }, { cookie: alice.cookie, "x-csrf-token": alice.csrf })).status).toBe(200);
    const served = async (h: Hearth, token: string) => (await h.call("notes/list", {}, { token })).status === 200;
    const refused = async (h: Hearth, token: string) => (await h.call("notes/list", {}, { token })).status === 401;

    test("a token revoked through one instance is refused by the other long before its cache of it runs out, though the other had it cached", async () => {
      const t = await newToken();
      expect(await served(b, t.token)).toBe(true);
      await revoke(t.id);
      expect(await until(() => refused(b, t.token))).toBe(true);
      expect(await refused(a, t.token)).toBe(true);
    });

    test("a chat message posted through one instance reaches a listener connected to the other", async () => {
      const token = (await newToken()).token;
      expect((await a.call("chat/send", { room: "garden", content: "first" }, { token })).status).toBe(200);
      const res = await fetch(`${b.url}/chat/garden/live`);
      expect(res.status).toBe(200);
      const listening = heard(res, "posted on a");
      expect((await a.call("chat/send", { room: "garden", content: "posted on a" }, { token })).status).toBe(200);
      expect(await listening).toBe(true);
    });

    test("failed sign-ins spread over both instances add up: the wait starts as soon as it would on one", async () => {
      const statuses = [];
      for (const h of [a, b, a, b]) statuses.push((await post(h, "/signin", { username: "alice", password: "not her password" })).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
      // Even the right password waits its turn, on either instance.
      expect((await post(a, "/signin", { username: "alice", password: "a long passphrase" })).status).toBe(429);
    });

    test("with Redis away both keep serving and a revocation still holds at once; once it is back, messages flow again", async () => {
      const t = await newToken();
      const later = await newToken();
      expect(await served(b, t.token)).toBe(true);
      await redis.stop();
      try {
        expect(await until(() => !b.rt.shared.heard)).toBe(true);
        // Calls answer at once, rate limits and all, from each instance's own memory.
        expect(await served(a, later.token)).toBe(true);
        expect(await served(b, later.token)).toBe(true);
        expect((await a.call("chat/send", { room: "garden", content: "while away" }, { token: later.token })).status).toBe(200);
        // The revocation cannot be told, yet the other instance, hearing nothing, trusts no cached token.
        await revoke(t.id);
        expect(await refused(b, t.token)).toBe(true);
      } finally {
        await redis.start();
      }
      expect(await until(() => a.rt.shared.heard && b.rt.shared.heard)).toBe(true);
      // Subscriptions are made again: a revocation and a chat message cross over as before, each once.
      expect(await served(b, later.token)).toBe(true);
      await revoke(later.id);
      expect(await until(() => refused(b, later.token))).toBe(true);
      const token = (await newToken()).token;
      const res = await fetch(`${b.url}/chat/garden/live`);
      const listening = heard(res, "after the outage");
      expect((await a.call("chat/send", { room: "garden", content: "after the outage" }, { token })).status).toBe(200);
      expect(await listening).toBe(true);
    });
  });

  test("a Redis that stops answering, its connections still open, is taken as away until it answers again", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "hearth-shared-hung-"));
    const env = { HEARTH_REDIS_URL: redis.url, HEARTH_RATE_READS: "0" };
    const a = await startHearth({ dataDir, env });
    const b = await startHearth({ dataDir, env });
    try {
      const token = await a.token("carol");
      expect(await until(() => a.rt.shared.heard && b.rt.shared.heard)).toBe(true);
      expect((await b.call("notes/list", {}, { token })).status).toBe(200);
      redis.pause();
      try {
        expect(await until(() => !b.rt.shared.heard)).toBe(true);
        // Still serving; and a token revoked meanwhile (its message cannot travel) is refused at once.
        expect((await b.call("notes/list", {}, { token })).status).toBe(200);
        await a.exec("UPDATE tokens SET revoked = 1");
        expect((await b.call("notes/list", {}, { token })).status).toBe(401);
      } finally {
        redis.resume();
      }
      expect(await until(() => a.rt.shared.heard && b.rt.shared.heard)).toBe(true);
    } finally {
      await a.stop();
      await b.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("messages published after a reconnect are heard once each", async () => {
    const one = new RedisShared(redis.url, quiet);
    const two = new RedisShared(redis.url, quiet);
    const got: string[] = [];
    one.subscribe("t", (m) => got.push(m));
    try {
      expect(await until(() => one.heard && two.heard)).toBe(true);
      two.publish("t", "before");
      expect(await until(() => got.length === 1)).toBe(true);
      await redis.stop();
      await redis.start();
      expect(await until(() => one.heard && two.heard)).toBe(true);
      two.publish("t", "after");
      expect(await until(() => got.includes("after"))).toBe(true);
      await Bun.sleep(100);
      expect(got).toEqual(["before", "after"]);
    } finally {
      one.close();
      two.close();
    }
  });
});
