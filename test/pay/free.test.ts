// Calls that cost the caller nothing take no payment: wallet/pay to this
// instance runs a tool free for the account without spending USDC, and a
// payment sent beside a token on a free call (metering off, or a method free
// for the account) is left unspent, or refused when it was already taken.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { wrapFetchWithPayment as wrapFetchV2 } from "@x402/fetch";
import { createWalletClient, defineChain, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { wrapFetchWithPayment as wrapFetchV1 } from "x402-fetch";
import { payX402 } from "../../core/pay/schema.ts";
import { walletPayments } from "../../plugins/wallet/schema.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { CHAIN_ID, startChain, startFacilitator, type Chain, x402Settings } from "./chain/evm.ts";
import { payer } from "./client.ts";
import { runs } from "./plugins/meter/index.ts";

let chain: Chain;
let facilitator: ReturnType<typeof startFacilitator>;
let payTo: `0x${string}`;
const dir = mkdtempSync(join(tmpdir(), "hearth-free-"));

const env = (extra: Record<string, string> = {}) => ({
  HEARTH_PLUGINS: `${import.meta.dir}/plugins`,
  HEARTH_RATE_PRICED: "0",
  HEARTH_RATE_READS: "0",
  HEARTH_RATE_WRITES: "0",
  HEARTH_SECRET: "a test secret that is long enough",
  ...x402Settings(chain, facilitator, payTo),
  CHAIN_RPC_URL: chain.rpc,
  ...extra,
});

beforeAll(async () => {
  chain = await startChain();
  facilitator = startFacilitator(chain);
  payTo = chain.accounts[1].address;
});

afterAll(async () => {
  facilitator?.stop();
  await chain?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function wallet(atomic: bigint) {
  const account = privateKeyToAccount(generatePrivateKey());
  await chain.mint(account.address, atomic);
  return account;
}

/** fetch that keeps the headers of every request it sends, as the x402 clients build them. */
function recording() {
  const sent: Headers[] = [];
  const f = ((input: RequestInfo | URL, init?: RequestInit) => {
    sent.push(input instanceof Request ? new Headers(input.headers) : new Headers(init?.headers));
    return fetch(input, init);
  }) as typeof fetch;
  return { fetch: f, sent };
}

describe("on an instance whose accounts call priced methods free", () => {
  let h: Hearth;
  beforeAll(async () => {
    h = await startHearth({ env: env() });
  });
  afterAll(async () => {
    await h?.stop();
  });

  test("wallet/pay to this instance runs a tool free for the account without a challenge or a payment", async () => {
    const token = await h.token("saver");
    const me = (await h.call("wallet/address", {}, { token })).body.result.address as `0x${string}`;
    await chain.mint(me, 1_000_000n);
    const before = { me: await chain.balance(me), payee: await chain.balance(payTo), verifies: facilitator.calls.verify, ran: runs.echo ?? 0 };
    const r = await h.call("wallet/pay", { tool: "meter_echo", args: { text: "free for me" } }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result.result.text).toBe("free for me");
    expect(r.body.result.paid).toBeNull();
    expect((runs.echo ?? 0) - before.ran).toBe(1);
    expect(await chain.balance(me)).toBe(before.me);
    expect(await chain.balance(payTo)).toBe(before.payee);
    expect(facilitator.calls.verify).toBe(before.verifies);
    expect(await h.rt.store.rdb.select().from(walletPayments).all()).toEqual([]);
  });

  test("a payment made with @x402/fetch and sent again with a token on a call free for the account is refused, naming its header", async () => {
    const from = await wallet(30_000n);
    const rec = recording();
    const paid = await wrapFetchV2(rec.fetch, payer(from).client)(`${h.url}/api/v1/meter/echo?text=stranger`);
    expect(paid.status).toBe(200);
    const signature = rec.sent.map((s) => s.get("payment-signature")).find(Boolean)!;
    expect(signature).toBeTruthy();
    const token = await h.token("reuser");
    const r = await h.call("meter/echo", { text: "again" }, { token, headers: { "PAYMENT-SIGNATURE": signature } });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("PAYMENT-SIGNATURE");
    expect(r.body.error.message).toContain("already taken");
  });
});

describe("with metering off", () => {
  test("a payment sent beside a token is left unspent, and one this instance already took is refused", async () => {
    const v1Wallet = (account: ReturnType<typeof privateKeyToAccount>) =>
      createWalletClient({
        account,
        chain: defineChain({ id: CHAIN_ID, name: "test", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [chain.rpc] } } }),
        transport: http(chain.rpc),
      });
    // Taken while this instance metered its calls: x402-fetch pays meter/echo with X-PAYMENT.
    let h = await startHearth({ dataDir: dir, env: env() });
    const from = await wallet(60_000n);
    const rec = recording();
    let spent: string;
    try {
      const paid = await wrapFetchV1(rec.fetch, v1Wallet(from) as never)(`${h.url}/api/v1/meter/echo?text=paid`);
      expect(paid.status).toBe(200);
      spent = rec.sent.map((s) => s.get("x-payment")).find(Boolean)!;
      expect(spent).toBeTruthy();
      expect(await h.rt.store.rdb.select().from(payX402).all()).toHaveLength(1);
    } finally {
      await h.stop();
    }
    h = await startHearth({ dataDir: dir, env: env({ HEARTH_METERING: "off" }) });
    try {
      const token = await h.token("owner");
      const refused = await h.call("meter/echo", { text: "spent" }, { token, headers: { "X-PAYMENT": spent } });
      expect(refused.status).toBe(400);
      expect(refused.body.error.field).toBe("X-PAYMENT");

      // One not yet taken: the call is free, so it stays unspent and no receipt is given.
      const fresh = await payer(from).pay({
        x402Version: 2,
        resource: { url: `${h.url}/api/v1/meter/echo`, description: "Echoes its text", mimeType: "application/json" },
        accepts: [{ scheme: "exact", network: `eip155:${CHAIN_ID}`, asset: chain.usdc, amount: "30000", payTo, maxTimeoutSeconds: 120, extra: { name: "USD Coin", version: "2" } }],
      });
      const before = await chain.balance(from.address);
      const free = await h.call("meter/echo", { text: "free" }, { token, headers: { "PAYMENT-SIGNATURE": payer(from).header(fresh) } });
      expect(free.status).toBe(200);
      expect(free.body.result.text).toBe("free");
      expect(free.headers.get("payment-response")).toBeNull();
      expect(await chain.balance(from.address)).toBe(before);
    } finally {
      await h.stop();
    }
  });
});
