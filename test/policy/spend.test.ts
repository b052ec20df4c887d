// A credential's day counts what it was charged, and only that: an answer
// from cache costs nothing and takes nothing from the day, and the calls made
// from a call (the agent's tools, an app's page) count as charged, each on
// its own. After every step what the ledger charged, what the day's count
// says and what ran agree.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { signUp, type Signed } from "../auth/people.ts";
import type { Hearth } from "../harness.ts";
import { runs } from "../pay/plugins/meter/index.ts";
import { startMetered, type Metered } from "./metered.ts";

let m: Metered;
let h: Hearth;
let s: Signed;
let ECHO: number, LOOKUP: number, ASK: number, APP_TEST: number;

beforeAll(async () => {
  m = await startMetered({ HEARTH_SIGNUP: "open" });
  h = m.h;
  ({ ECHO, LOOKUP, ASK, APP_TEST } = m.prices);
  s = await signUp(h, "alice");
  await h.grant("alice", 1000);
});
afterAll(() => m?.stop());

/** A token of alice's with a daily credit limit. */
async function limited(name: string, creditsPerDay: number) {
  const res = await fetch(`${h.url}/token`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie: s.cookie, "x-csrf-token": s.csrf },
    body: JSON.stringify({ name, policy: { creditsPerDay } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as any).result as { id: string; token: string };
}

/** What the ledger has charged alice, the day's count for the credential, and what ran. */
async function state(credential: string) {
  const charged = await h.rows<{ delta: number }>("SELECT l.delta FROM pay_ledger l JOIN accounts a ON a.id = l.account WHERE a.username = 'alice' AND l.reason = 'charge'");
  const day = await h.row<{ spent: number }>("SELECT spent FROM credential_spend WHERE credential = ?", credential);
  return { charged: charged.reduce((n, r) => n - Number(r.delta), 0), day: Number(day?.spent ?? 0), echo: runs.echo ?? 0, hits: m.hits() };
}

/** Each step's charge equals the day's growth and the price of what ran (an echo, a lookup the provider answered). */
function agrees(a: Awaited<ReturnType<typeof state>>, b: Awaited<ReturnType<typeof state>>, extra = 0) {
  const ran = (b.echo - a.echo) * ECHO + (b.hits - a.hits) * LOOKUP + extra;
  expect(b.charged - a.charged).toBe(ran);
  expect(b.day - a.day).toBe(ran);
}

test("an answer from cache takes nothing from the day; the charged ones do, exactly", async () => {
  const t = await limited("reader", 100);
  const s0 = await state(t.id);
  const first = await h.call("meter/lookup", { key: "cached-day" }, { token: t.token });
  expect(first.body.result.cached).toBe(false);
  const s1 = await state(t.id);
  agrees(s0, s1);
  expect(s1.day - s0.day).toBe(LOOKUP);
  for (let i = 0; i < 3; i++) {
    const again = await h.call("meter/lookup", { key: "cached-day" }, { token: t.token });
    expect(again.status).toBe(200);
    expect(again.body.result.cached).toBe(true);
  }
  const s2 = await state(t.id);
  expect(s2.day).toBe(s1.day);
  expect(s2.charged).toBe(s1.charged);
  expect((await h.call("meter/echo", { text: "x" }, { token: t.token })).status).toBe(200);
  agrees(s1, await state(t.id));
});

test("cached answers do not use up a small day: two lookups' worth answers from cache again and again, and still has room for the second", async () => {
  // A call is priced before it runs, so it must fit in what is left; an answer from cache then gives its credits back.
  const t = await limited("tight", 2 * LOOKUP);
  expect((await h.call("meter/lookup", { key: "tight" }, { token: t.token })).status).toBe(200);
  for (let i = 0; i < 3; i++) {
    const r = await h.call("meter/lookup", { key: "tight" }, { token: t.token });
    expect(r.status).toBe(200);
    expect(r.body.result.cached).toBe(true);
  }
  const second = await h.call("meter/lookup", { key: "tight-second" }, { token: t.token });
  expect(second.status).toBe(200);
  expect(second.body.result.cached).toBe(false);
  // The day is spent by what was charged: a third that must reach the provider is refused.
  const out = await h.call("meter/lookup", { key: "tight-third" }, { token: t.token });
  expect(out.status).toBe(403);
  expect(out.body.error).toMatchObject({ policy: "limit" });
  expect(Number((await h.row<{ spent: number }>("SELECT spent FROM credential_spend WHERE credential = ?", t.id))!.spent)).toBe(2 * LOOKUP);
});

test("the agent's tool calls under a policy: the run and each tool are counted as charged, a cached tool answer not at all", async () => {
  const t = await limited("agent day", 500);
  expect((await h.call("meter/lookup", { key: "agent-day" }, { token: t.token })).status).toBe(200);
  m.ai.reply(
    {
      calls: [
        { name: "meter_lookup", arguments: JSON.stringify({ key: "agent-day" }) },
        { name: "meter_echo", arguments: JSON.stringify({ text: "one" }) },
        { name: "meter_lookup", arguments: JSON.stringify({ key: "agent-day-fresh" }) },
      ],
    },
    { say: "Done." },
  );
  const before = await state(t.id);
  const r = await h.call("agent/ask", { prompt: "Look it up and echo." }, { token: t.token });
  expect(r.status).toBe(200);
  expect(r.body.result.calls).toEqual([
    { tool: "meter_lookup", ok: true },
    { tool: "meter_echo", ok: true },
    { tool: "meter_lookup", ok: true },
  ]);
  const after = await state(t.id);
  expect(after.echo - before.echo).toBe(1);
  expect(after.hits - before.hits).toBe(1);
  agrees(before, after, ASK);
  expect(after.day - before.day).toBe(ASK + ECHO + LOOKUP);
});

test("an app's calls under a policy: apps/test and each paid call its page makes count as charged", async () => {
  const t = await limited("app day", 500);
  expect((await h.call("meter/lookup", { key: "app-day" }, { token: t.token })).status).toBe(200);
  const html = `<!doctype html><html><head><title>Meter</title></head><body><script>
hearth.call("meter/lookup", { key: "app-day" });
hearth.call("meter/echo", { text: "first" });
hearth.call("meter/echo", { text: "second" });
</script></body></html>`;
  const made = await h.call("apps/create", { name: "Day reader", html }, { token: t.token });
  expect(made.status).toBe(200);
  const before = await state(t.id);
  const r = await h.call("apps/test", { slug: made.body.result.slug }, { token: t.token });
  expect(r.status).toBe(200);
  expect(r.body.result.calls.map((c: any) => [c.method, c.status])).toEqual([
    ["meter/lookup", 200],
    ["meter/echo", 200],
    ["meter/echo", 200],
  ]);
  expect(r.body.result.calls[0].result.cached).toBe(true);
  const after = await state(t.id);
  expect(after.echo - before.echo).toBe(2);
  agrees(before, after, APP_TEST);
});
