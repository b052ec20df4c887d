// The wallet service against a real local chain: keys sealed at rest,
// balances over CHAIN_RPC_URL, and paying this instance (in-process) and
// another instance (over HTTP) within the caps.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { walletKeys, walletPayments } from "../../plugins/wallet/schema.ts";
import { payX402 } from "../../core/pay/schema.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { NETWORK, startChain, startFacilitator, type Chain } from "../pay/chain/evm.ts";

const PLUGINS = `${import.meta.dir}/../pay/plugins`;
const SECRET = "a test secret that is long enough";

let chain: Chain;
let facilitator: ReturnType<typeof startFacilitator>;
const clock = new TestClock(new Date("2026-11-21T10:00:00Z").getTime());
let h: Hearth;
let remote: Hearth;
let token: string;

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    HEARTH_METER_ACCOUNTS: "all", 
    HEARTH_PLUGINS: PLUGINS,
    HEARTH_RATE_PRICED: "0",
    HEARTH_RATE_READS: "0",
    HEARTH_RATE_WRITES: "0",
    X402_PAY_TO: chain.accounts[1].address,
    X402_FACILITATOR_URL: facilitator.url,
    X402_NETWORK: NETWORK,
    X402_ASSET: chain.usdc,
    CHAIN_RPC_URL: chain.rpc,
    ...extra,
  };
}

beforeAll(async () => {
  chain = await startChain();
  facilitator = startFacilitator(chain);
  remote = await startHearth({ env: env({ X402_PAY_TO: chain.accounts[3].address }) });
  h = await startHearth({ clock, env: env({ HEARTH_SECRET: SECRET, WALLET_SERVERS: `remote=${remote.url},remotemcp=${remote.url}/mcp`, WALLET_CAP_PER_CALL: "0.04", WALLET_CAP_PER_DAY: "0.10" }) });
  token = await h.token("walt");
});

afterAll(async () => {
  await h?.stop();
  await remote?.stop();
  facilitator?.stop();
  await chain?.stop();
});

async function address(t = token): Promise<`0x${string}`> {
  const r = await h.call("wallet/address", {}, { token: t });
  expect(r.status).toBe(200);
  return r.body.result.address;
}

describe("wallet", () => {
  test("the address is made on first request, kept, and its key is sealed at rest", async () => {
    const a = await address();
    expect(a).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(await address()).toBe(a);
    const row = (await h.rt.store.rdb.select().from(walletKeys).all()).find((k) => k.address === a)!;
    expect(row.sealed).not.toMatch(/^0x/);
    expect(Buffer.from(row.sealed, "base64").toString("latin1")).not.toContain("0x");
    // Another account gets another wallet.
    expect(await address(await h.token("other"))).not.toBe(a);
  });

  test("without HEARTH_SECRET no wallet is made, and the answer says what to set", async () => {
    const bare = await startHearth({ env: env() });
    try {
      const r = await bare.call("wallet/address", {}, { token: await bare.token("nokey") });
      expect(r.status).toBe(501);
      expect(r.body.error.message).toContain("HEARTH_SECRET");
    } finally {
      await bare.stop();
    }
  });

  test("the balance reads USDC on the chain: zero is zero", async () => {
    const t = await h.token("zero");
    const r = await h.call("wallet/balance", {}, { token: t });
    expect(r.status).toBe(200);
    expect(r.body.result.usdc).toBe("0");
    await chain.mint(r.body.result.address, 1_500_000n);
    const after = await h.call("wallet/balance", {}, { token: t });
    expect(after.body.result.usdc).toBe("1.5");
    expect(after.body.result.atomic).toBe("1500000");
  });

  test("an unreachable chain is a 503 that says so, never a zero", async () => {
    const dead = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const port = dead.port;
    dead.stop(true);
    const off = await startHearth({ env: env({ HEARTH_SECRET: SECRET, CHAIN_RPC_URL: `http://127.0.0.1:${port}` }) });
    try {
      const r = await off.call("wallet/balance", {}, { token: await off.token("offline") });
      expect(r.status).toBe(503);
      expect(r.body.error.kind).toBe("upstream_unavailable");
      expect(r.body.error.message).toContain("could not be reached");
      expect(r.body.error.message).toContain("not zero");
    } finally {
      await off.stop();
    }
  });

  test("list names this instance and the configured servers", async () => {
    const r = await h.call("wallet/list", {}, { token });
    expect(r.status).toBe(200);
    expect(r.body.result.map((s: { name: string }) => s.name)).toEqual(["this", "remote", "remotemcp"]);
  });

  test("a free tool costs nothing", async () => {
    const r = await h.call("wallet/pay", { tool: "meter_free" }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result.paid).toBeNull();
    expect(r.body.result.result).toEqual({ ok: true });
  });

  test("paying this instance goes through dispatch: challenge, signed payment, settlement, record", async () => {
    const me = await address();
    await chain.mint(me, 1_000_000n);
    const payee = chain.accounts[1].address;
    const before = { me: await chain.balance(me), payee: await chain.balance(payee) };
    const r = await h.call("wallet/pay", { tool: "meter_echo", args: { text: "from the wallet" } }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result.result.text).toBe("from the wallet");
    expect(r.body.result.paid).toMatchObject({ usdc: "0.03", atomic: "30000", to: payee, network: NETWORK });
    expect(await chain.balance(me)).toBe(before.me - 30_000n);
    expect(await chain.balance(payee)).toBe(before.payee + 30_000n);
    expect((await h.rt.store.rdb.select().from(payX402).all()).some((p) => p.transaction === r.body.result.paid.transaction)).toBe(true);
    const recorded = (await h.rt.store.rdb.select().from(walletPayments).all()).at(-1)!;
    expect(recorded).toMatchObject({ server: "this", tool: "meter_echo", amount: "30000", payTo: payee, transaction: r.body.result.paid.transaction });
  });

  test("over the per-call cap is 403 naming the cap, and nothing is spent", async () => {
    const me = await address();
    const before = await chain.balance(me);
    const r = await h.call("wallet/pay", { tool: "meter_segments", args: { text: "x".repeat(160 * 4 + 1) } }, { token });
    expect(r.status).toBe(403);
    expect(r.body.error.message).toContain("WALLET_CAP_PER_CALL");
    expect(await chain.balance(me)).toBe(before);
  });

  test("paying another server over HTTP, then the per-day cap, which a new day resets", async () => {
    const me = await address();
    const payee = chain.accounts[3].address;
    const before = await chain.balance(payee);
    const r = await h.call("wallet/pay", { server: "remote", tool: "meter_echo", args: { text: "remote" } }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result.result.text).toBe("remote");
    expect(r.body.result.paid.to).toBe(payee);
    expect(await chain.balance(payee)).toBe(before + 30_000n);
    // Paid today: 0.03 + 0.03; one more 0.03 fits under 0.10, the next does not.
    expect((await h.call("wallet/pay", { tool: "meter_echo", args: { text: "third" } }, { token })).status).toBe(200);
    const spentBefore = await chain.balance(me);
    const over = await h.call("wallet/pay", { tool: "meter_echo", args: { text: "fourth" } }, { token });
    expect(over.status).toBe(403);
    expect(over.body.error.message).toContain("WALLET_CAP_PER_DAY");
    expect(await chain.balance(me)).toBe(spentBefore);
    clock.advance(24 * 3600 * 1000);
    expect((await h.call("wallet/pay", { tool: "meter_echo", args: { text: "next day" } }, { token })).status).toBe(200);
    expect((await h.rt.store.rdb.select().from(walletPayments).all()).filter((p) => p.server === "remote").length).toBe(1);
  });

  test("paying another server's tool over MCP: the tool error carries the challenge, the receipt comes back in _meta", async () => {
    const t = await h.token("mcpwalt");
    const me = await address(t);
    await chain.mint(me, 100_000n);
    const payee = chain.accounts[3].address;
    const before = await chain.balance(payee);
    const r = await h.call("wallet/pay", { server: "remotemcp", tool: "meter_echo", args: { text: "over mcp" } }, { token: t });
    expect(r.status).toBe(200);
    expect(r.body.result.result).toEqual({ result: { text: "over mcp", runs: expect.any(Number) } });
    expect(r.body.result.paid).toMatchObject({ atomic: "30000", to: payee });
    expect(r.body.result.paid.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await chain.balance(payee)).toBe(before + 30_000n);
    expect(await chain.balance(me)).toBe(70_000n);
  });

  test("a top-up turns the wallet's USDC into credits once the transfer settles", async () => {
    const t = await h.token("topper");
    const me = await address(t);
    const payee = chain.accounts[1].address;
    // Nothing in the wallet: the facilitator refuses, and no credits appear.
    const broke = await h.call("credits/topup", { credits: 5 }, { token: t });
    expect(broke.status).toBe(402);
    expect((await h.call("credits/balance", {}, { token: t })).body.result.balance).toBe(0);

    await chain.mint(me, 100_000n);
    const before = await chain.balance(payee);
    const r = await h.call("credits/topup", { credits: 5 }, { token: t });
    expect(r.status).toBe(200);
    expect(r.body.result.balance).toBe(5);
    expect(await chain.balance(me)).toBe(50_000n);
    expect(await chain.balance(payee)).toBe(before + 50_000n);
    const c = (await h.call("credits/balance", {}, { token: t })).body.result;
    expect(c.entries[0]).toMatchObject({ delta: 5, reason: "topup", note: `USDC ${r.body.result.transaction}` });
    // The credits pay for calls like any others.
    expect((await h.call("meter/echo", { text: "on credits" }, { token: t })).status).toBe(200);
    expect((await h.call("credits/balance", {}, { token: t })).body.result.balance).toBe(2);
  });

  test("an unknown server is a 400 naming the field; the wallet needs an account", async () => {
    const r = await h.call("wallet/pay", { server: "nowhere", tool: "meter_echo" }, { token });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("server");
    expect((await h.call("wallet/address", {})).status).toBe(401);
  });
});
