// Rate limits per caller and class of call: 429 rate_limited with Retry-After,
// refilled as time passes, counted apart for each account (whichever token or
// session it calls with) and each stranger's address.
import { afterEach, describe, expect, test } from "bun:test";
import { Buckets } from "../../core/auth/limits.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { mcpClient, rpc } from "../mcp/client.ts";
import { GUESTBOOK, signUp } from "./people.ts";

let h: Hearth | null = null;
afterEach(async () => {
  await h?.stop();
  h = null;
});

describe("API rate limits", () => {
  test("over the limit: 429 rate_limited with Retry-After, until the bucket refills", async () => {
    const clock = new TestClock();
    h = await startHearth({ clock, env: { HEARTH_RATE_READS: "3" } });
    const token = await h.token("alice");
    for (let i = 0; i < 3; i++) expect((await h.call("notes/list", {}, { token })).status).toBe(200);
    const over = await h.call("notes/list", {}, { token });
    expect(over.status).toBe(429);
    expect(over.body.error).toMatchObject({ status: 429, kind: "rate_limited", retry: true, retry_after: 20 });
    expect(over.headers.get("retry-after")).toBe("20");
    clock.advance(19_000);
    expect((await h.call("notes/list", {}, { token })).status).toBe(429);
    clock.advance(1_000);
    expect((await h.call("notes/list", {}, { token })).status).toBe(200);
  });

  test("an account's tokens, app passwords and sessions share one share; other accounts and strangers' addresses have their own", async () => {
    // A clock that stands still: the buckets refill on it, never while a busy machine takes its time between calls.
    h = await startHearth({ clock: new TestClock(), env: { HEARTH_RATE_READS: "4", HEARTH_PLUGINS: GUESTBOOK, HEARTH_SIGNUP: "open" } });
    const alice = await signUp(h, "alice");
    const bob = await signUp(h, "bob");
    // Making more tokens buys no more calls.
    const tokens = [await h.token("alice"), await h.token("alice"), await h.token("alice")];
    for (const t of tokens) expect((await h.call("notes/list", {}, { token: t })).status).toBe(200);
    const basic = `Basic ${Buffer.from(`alice:${await h.token("alice")}`).toString("base64")}`;
    expect((await h.call("notes/list", {}, { headers: { authorization: basic } })).status).toBe(200);
    const over = await h.call("notes/list", {}, { token: await h.token("alice") });
    expect(over.status).toBe(429);
    expect(over.body.error).toMatchObject({ status: 429, kind: "rate_limited" });
    expect((await h.call("notes/list", {}, { token: tokens[0] })).status).toBe(429);
    expect((await h.call("notes/list", {}, { headers: { authorization: basic } })).status).toBe(429);
    expect((await h.call("notes/list", {}, { headers: { cookie: alice.cookie } })).status).toBe(429);
    // Over MCP too.
    const m = await mcpClient(h.url, { token: tokens[1] });
    try {
      const refused = (await m.call("notes_list")) as any;
      expect(refused.structuredContent.error).toMatchObject({ status: 429, kind: "rate_limited" });
    } finally {
      await m.close();
    }
    // Another account is not held back.
    expect((await h.call("notes/list", {}, { headers: { cookie: bob.cookie } })).status).toBe(200);
    expect((await h.call("notes/list", {}, { token: await h.token("bob") })).status).toBe(200);
    // Strangers are counted by address (all of this test's strangers share 127.0.0.1).
    for (let i = 0; i < 4; i++) expect((await h.call("guestbook/list")).status).toBe(200);
    expect((await h.call("guestbook/list")).status).toBe(429);
  });

  test("reads, writes and priced calls are counted apart", async () => {
    h = await startHearth({ clock: new TestClock(), env: { HEARTH_RATE_READS: "1", HEARTH_RATE_WRITES: "1", HEARTH_RATE_PRICED: "1", HEARTH_PLUGINS: GUESTBOOK } });
    const token = await h.token("alice");
    expect((await h.call("guestbook/stamp", {}, { token })).status).toBe(200);
    expect((await h.call("guestbook/stamp", {}, { token })).status).toBe(429);
    expect((await h.call("notes/list", {}, { token })).status).toBe(200);
    expect((await h.call("notes/list", {}, { token })).status).toBe(429);
    // A priced method has its own class (whatever payment then says about it).
    expect((await h.call("guestbook/appraise", {}, { token })).status).not.toBe(429);
    expect((await h.call("guestbook/appraise", {}, { token })).status).toBe(429);
  });

  test("0 turns a class off", async () => {
    h = await startHearth({ env: { HEARTH_RATE_READS: "0" } });
    const token = await h.token("alice");
    for (let i = 0; i < 30; i++) expect((await h.call("notes/list", {}, { token })).status).toBe(200);
  });
});

describe("one limiter on every path", () => {
  test("MCP calls, on a session and without one, draw on the same buckets as HTTP calls", async () => {
    h = await startHearth({ clock: new TestClock(), env: { HEARTH_METER_ACCOUNTS: "all", HEARTH_RATE_PRICED: "4", HEARTH_PLUGINS: GUESTBOOK } });
    const token = await h.token("alice");
    await h.grant("alice", 100);
    for (let i = 0; i < 2; i++) expect((await h.call("guestbook/appraise", {}, { token })).status).toBe(200);
    const m = await mcpClient(h.url, { token });
    try {
      for (let i = 0; i < 2; i++) expect((await m.call("guestbook_appraise")).isError).toBeFalsy();
      const over = (await m.call("guestbook_appraise")) as any;
      expect(over.isError).toBe(true);
      expect(over.structuredContent.error).toMatchObject({ status: 429, kind: "rate_limited" });
    } finally {
      await m.close();
    }
    const stateless = await rpc(h.url, "tools/call", { name: "guestbook_appraise", arguments: {} }, {
      authorization: `Bearer ${token}`,
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
    });
    expect(stateless.body.result.structuredContent.error.status).toBe(429);
    expect((await h.call("guestbook/appraise", {}, { token })).status).toBe(429);
    // Only the four that ran were charged.
    expect((await h.call("credits/balance", {}, { token })).body.result.balance).toBe(100 - 4 * 2);
  });

  test("nested calls each take one turn from whoever started them; a refused one is that call's answer, not the outer call's", async () => {
    h = await startHearth({ clock: new TestClock(), env: { HEARTH_METER_ACCOUNTS: "all", HEARTH_RATE_PRICED: "2", HEARTH_PLUGINS: GUESTBOOK } });
    const token = await h.token("alice");
    await h.grant("alice", 100);
    const html = `<!doctype html><html><head><title>Appraiser</title></head><body><script>
hearth.call("guestbook/appraise", {});
hearth.call("guestbook/appraise", {});
hearth.call("guestbook/appraise", {});
</script></body></html>`;
    const made = await h.call("apps/create", { name: "Appraiser", html }, { token });
    const r = await h.call("apps/test", { slug: made.body.result.slug }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result.calls.map((c: any) => c.status)).toEqual([200, 200, 429]);
    expect((await h.call("guestbook/appraise", {}, { token })).status).toBe(429);
    expect((await h.call("credits/balance", {}, { token })).body.result.balance).toBe(100 - 2 * 2);
  });
});

describe("buckets", () => {
  test("refill at the configured rate up to a minute's worth", () => {
    const b = new Buckets(60);
    for (let i = 0; i < 60; i++) expect(b.take("k", 0)).toBe(0);
    expect(b.take("k", 0)).toBe(1);
    expect(b.take("k", 1000)).toBe(0);
    // A long quiet time refills no more than the cap.
    for (let i = 0; i < 60; i++) expect(b.take("k", 3_600_000)).toBe(0);
    expect(b.take("k", 3_600_000)).toBeGreaterThan(0);
  });

  test("memory stays bounded under many callers", () => {
    const b = new Buckets(10);
    for (let i = 0; i < 120_000; i++) b.take(`ip:${i}`, i);
    expect(b.size).toBeLessThanOrEqual(50_000);
  });
});
