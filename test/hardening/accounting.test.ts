// Paid call accounting: over HTTP, MCP, apps/test, the agent and wallet/pay
// to this instance, the credits taken and the x402 payments settled add up
// exactly to the prices of what ran, with answers from cache in the mix (they
// cost nothing) and with a client repeating the same X-Request-Id (which must
// not change what anyone pays).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { payLedger, payX402 } from "../../core/pay/schema.ts";
import type { Hearth } from "../harness.ts";
import { startMetered, type Metered } from "../policy/metered.ts";
import { mcpClient } from "../mcp/client.ts";
import { startChain, startFacilitator, type Chain, x402Settings } from "../pay/chain/evm.ts";
import { challengeOf, payer } from "../pay/client.ts";
import { runs } from "../pay/plugins/meter/index.ts";

// A credit is 10^4 atomic units of the test USDC. Prices are read from the instance's own list.
const ATOMIC = 10_000n;
let ECHO: number, LOOKUP: number, ASK: number, APP_TEST: number;

let chain: Chain;
let facilitator: ReturnType<typeof startFacilitator>;
let m: Metered;
let h: Hearth;
let payTo: `0x${string}`;
let stranger: ReturnType<typeof payer>;

beforeAll(async () => {
  chain = await startChain();
  facilitator = startFacilitator(chain);
  payTo = chain.accounts[1].address;
  stranger = payer(chain.accounts[2]);
  await chain.mint(stranger.address, 10_000_000n);
  m = await startMetered({ ...x402Settings(chain, facilitator, payTo), CHAIN_RPC_URL: chain.rpc, HEARTH_SECRET: "a test secret that is long enough" });
  h = m.h;
  ({ ECHO, LOOKUP, ASK, APP_TEST } = m.prices);
  expect(ASK).toBeGreaterThan(0);
});

afterAll(async () => {
  await m?.stop();
  facilitator?.stop();
  await chain?.stop();
});

/** What has run so far: meter/echo handlers, requests that reached the provider, and the x402 side. */
async function snapshot(account?: string) {
  return {
    echo: runs.echo ?? 0,
    hits: m.hits(),
    balance: account ? await balance(account) : 0,
    received: await chain.balance(payTo),
    settledRows: (await h.rt.store.rdb.select().from(payX402).all()).length,
  };
}

async function balance(token: string): Promise<number> {
  const r = await h.call("credits/balance", {}, { token });
  expect(r.status).toBe(200);
  return r.body.result.balance;
}

/** A fresh account holding `credits`, with its token. */
async function funded(username: string, credits = 100) {
  const token = await h.token(username);
  await h.grant(username, credits);
  return token;
}

/** Prices of what ran between two snapshots: each echo, and each lookup the provider had to answer (a cached one is free). */
const owed = (a: Awaited<ReturnType<typeof snapshot>>, b: Awaited<ReturnType<typeof snapshot>>) => (b.echo - a.echo) * ECHO + (b.hits - a.hits) * LOOKUP;

/** Charges in the ledger for this account: one entry per charged call, each with an id of the server's own. */
async function chargesOf(username: string) {
  const rows = (await h.rt.store.rdb.select().from(payLedger).all());
  const account = (await h.row<{ id: string }>("SELECT id FROM accounts WHERE username = ?", username))!.id;
  return rows.filter((r) => r.account === account && r.delta < 0);
}

/** Primes the cache for `key`, so later lookups of it are answered without the provider. */
async function primed(key: string, token: string) {
  const r = await h.call("meter/lookup", { key }, { token });
  expect(r.status).toBe(200);
  expect(r.body.result.cached).toBe(false);
}

describe("paid call accounting", () => {
  test("HTTP with credits: a repeated X-Request-Id and a cached read leave every paid call charged", async () => {
    const token = await funded("carol");
    await primed("http", token);
    const rid = { "x-request-id": "carol-repeats-this-id" };
    const before = await snapshot(token);
    const cached = await h.call("meter/lookup", { key: "http" }, { token, headers: rid });
    expect(cached.body.result.cached).toBe(true);
    for (const text of ["one", "two", "three"]) expect((await h.call("meter/echo", { text }, { token, headers: rid })).status).toBe(200);
    const after = await snapshot(token);
    expect(after.echo - before.echo).toBe(3);
    expect(before.balance - after.balance).toBe(owed(before, after));
    expect(before.balance - after.balance).toBe(3 * ECHO);
    // Every charge names a call of its own, never the id the client chose.
    const ids = (await chargesOf("carol")).map((r) => r.requestId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).not.toContain("carol-repeats-this-id");
  });

  test("HTTP with x402: a payment made under a repeated X-Request-Id is settled, and cannot be used again", async () => {
    const rid = { "x-request-id": "stranger-repeats-id" };
    const pay = async (path: string, args: Record<string, unknown>, headers: Record<string, string> = {}) => {
      const asked = await h.call(path, args, { headers });
      expect(asked.status).toBe(402);
      return stranger.header(await stranger.pay(challengeOf(asked.headers)));
    };
    const before = await snapshot();
    const first = await h.call("meter/lookup", { key: "x402" }, { headers: { "PAYMENT-SIGNATURE": await pay("meter/lookup", { key: "x402" }) } });
    expect(first.body.result.cached).toBe(false);
    // The same lookup again is answered from cache: its payment is verified but left unspent.
    const cached = await h.call("meter/lookup", { key: "x402" }, { headers: { ...rid, "PAYMENT-SIGNATURE": await pay("meter/lookup", { key: "x402" }) } });
    expect(cached.body.result.cached).toBe(true);
    const signature = await pay("meter/echo", { text: "paid" });
    const echoed = await h.call("meter/echo", { text: "paid" }, { headers: { ...rid, "PAYMENT-SIGNATURE": signature } });
    expect(echoed.status).toBe(200);
    const replay = await h.call("meter/echo", { text: "again" }, { headers: { ...rid, "PAYMENT-SIGNATURE": signature } });
    expect(replay.status).toBe(402);
    expect(replay.body.error.message).toContain("already used");
    const after = await snapshot();
    expect(after.echo - before.echo).toBe(1);
    expect(after.hits - before.hits).toBe(1);
    expect(after.received - before.received).toBe(BigInt(owed(before, after)) * ATOMIC);
    expect(after.settledRows - before.settledRows).toBe(2);
  });

  test("MCP with credits and with x402: calls sharing one X-Request-Id are each charged", async () => {
    const token = await funded("dave");
    await primed("mcp", token);
    const headers = { "x-request-id": "dave-mcp-session-id" };
    const m = await mcpClient(h.url, { token, headers });
    const before = await snapshot(token);
    try {
      const cached = (await m.call("meter_lookup", { key: "mcp" })) as any;
      expect(cached.structuredContent.result.cached).toBe(true);
      for (const text of ["a", "b", "c"]) expect((await m.call("meter_echo", { text })).isError).toBeFalsy();
    } finally {
      await m.close();
    }
    const mid = await snapshot(token);
    expect(mid.echo - before.echo).toBe(3);
    expect(before.balance - mid.balance).toBe(owed(before, mid));

    // A stranger paying over MCP with the same id.
    const s = await mcpClient(h.url, { headers });
    try {
      const cached = (await s.call("meter_lookup", { key: "mcp" })) as any;
      expect(cached.isError).toBe(true);
      const paidCached = (await s.client.callTool({ name: "meter_lookup", arguments: { key: "mcp" }, _meta: { "x402/payment": await stranger.pay(cached.structuredContent) } })) as any;
      expect(paidCached.structuredContent.result.cached).toBe(true);
      const asked = (await s.call("meter_echo", { text: "d" })) as any;
      const payment = await stranger.pay(asked.structuredContent);
      const paid = (await s.client.callTool({ name: "meter_echo", arguments: { text: "d" }, _meta: { "x402/payment": payment } })) as any;
      expect(paid.isError).toBeFalsy();
      expect(paid._meta["x402/payment-response"].success).toBe(true);
      const replay = (await s.client.callTool({ name: "meter_echo", arguments: { text: "e" }, _meta: { "x402/payment": payment } })) as any;
      expect(replay.isError).toBe(true);
    } finally {
      await s.close();
    }
    const after = await snapshot();
    expect(after.echo - mid.echo).toBe(1);
    expect(after.received - mid.received).toBe(BigInt(owed(mid, after)) * ATOMIC);
    expect(after.settledRows - mid.settledRows).toBe(1);
  });

  test("apps/test: each paid call the page makes is charged on its own, whatever its neighbours read from cache", async () => {
    const token = await funded("erin");
    await primed("app", token);
    const html = `<!doctype html><html><head><title>Meter</title></head><body><script>
hearth.call("meter/lookup", { key: "app" });
hearth.call("meter/echo", { text: "first" });
hearth.call("meter/echo", { text: "second" });
</script></body></html>`;
    const made = await h.call("apps/create", { name: "Meter reader", html }, { token });
    expect(made.status).toBe(200);
    const before = await snapshot(token);
    const r = await h.call("apps/test", { slug: made.body.result.slug }, { token, headers: { "x-request-id": "erin-app-test-id" } });
    expect(r.status).toBe(200);
    expect(r.body.result.calls.map((c: any) => [c.method, c.status])).toEqual([
      ["meter/lookup", 200],
      ["meter/echo", 200],
      ["meter/echo", 200],
    ]);
    expect(r.body.result.calls[0].result.cached).toBe(true);
    const after = await snapshot(token);
    expect(after.echo - before.echo).toBe(2);
    expect(before.balance - after.balance).toBe(APP_TEST + owed(before, after));
    expect(before.balance - after.balance).toBe(APP_TEST + 2 * ECHO);
  });

  test("agent/ask: the run and each tool it calls are charged on their own, a cached tool answer included", async () => {
    const token = await funded("fay");
    await primed("agent", token);
    m.ai.reply(
      {
        calls: [
          { name: "meter_lookup", arguments: JSON.stringify({ key: "agent" }) },
          { name: "meter_echo", arguments: JSON.stringify({ text: "one" }) },
          { name: "meter_echo", arguments: JSON.stringify({ text: "two" }) },
        ],
      },
      { say: "Done." },
    );
    const before = await snapshot(token);
    const r = await h.call("agent/ask", { prompt: "Look it up and echo twice." }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result.calls).toEqual([
      { tool: "meter_lookup", ok: true },
      { tool: "meter_echo", ok: true },
      { tool: "meter_echo", ok: true },
    ]);
    const after = await snapshot(token);
    expect(after.echo - before.echo).toBe(2);
    expect(after.hits).toBe(before.hits);
    expect(before.balance - after.balance).toBe(ASK + owed(before, after));
    expect(before.balance - after.balance).toBe(ASK + 2 * ECHO);
  });

  test("wallet/pay to this instance: every tool that ran for a price is settled, even under a client's chosen ids", async () => {
    const token = await funded("gus");
    const wallet = (await h.call("wallet/address", {}, { token })).body.result.address as `0x${string}`;
    await chain.mint(wallet, 1_000_000n);
    await primed("wallet", token);
    const before = { ...(await snapshot()), wallet: await chain.balance(wallet) };
    // A cached read under an id that is the wallet call's own id with a suffix, then the paid call under that id.
    const cached = await h.call("meter/lookup", { key: "wallet" }, { token, headers: { "x-request-id": "gus-wallet-call.paid" } });
    expect(cached.body.result.cached).toBe(true);
    const paid = await h.call("wallet/pay", { tool: "meter_echo", args: { text: "from the wallet" } }, { token, headers: { "x-request-id": "gus-wallet-call" } });
    expect(paid.status).toBe(200);
    expect(paid.body.result.paid).toMatchObject({ atomic: (BigInt(ECHO) * ATOMIC).toString(), to: payTo });
    // A cached tool through the wallet: verified, not settled, nothing spent.
    const free = await h.call("wallet/pay", { tool: "meter_lookup", args: { key: "wallet" } }, { token });
    expect(free.status).toBe(200);
    expect(free.body.result.paid).toBeNull();
    const after = { ...(await snapshot()), wallet: await chain.balance(wallet) };
    expect(after.echo - before.echo).toBe(1);
    expect(after.received - before.received).toBe(BigInt(owed(before, after)) * ATOMIC);
    expect(before.wallet - after.wallet).toBe(BigInt(owed(before, after)) * ATOMIC);
    expect(after.settledRows - before.settledRows).toBe(1);
  });
});
