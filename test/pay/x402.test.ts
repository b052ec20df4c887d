// x402 for strangers over HTTP and MCP, against a real local chain and a
// facilitator that checks signatures and settles on it.
import "../mcp/patient.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { PaymentPayload } from "@x402/core/types";
import { authorizationTypes } from "@x402/evm";
import { toHex } from "viem";
import { activity } from "../../core/db/schema.ts";
import { payX402 } from "../../core/pay/schema.ts";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { mcpClient } from "../mcp/client.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { CHAIN_ID, NETWORK, startChain, startFacilitator, type Chain, x402Settings } from "./chain/evm.ts";
import { challengeOf, payer, receiptOf } from "./client.ts";
import { runs } from "./plugins/meter/index.ts";

let chain: Chain;
let facilitator: ReturnType<typeof startFacilitator>;
let h: Hearth;
let payTo: `0x${string}`;
let alice: ReturnType<typeof payer>;

const PRICE_ATOMIC = 30_000n; // meter/echo: 3 credits, a credit is $0.01 = 10^4 atomic USDC

beforeAll(async () => {
  chain = await startChain();
  facilitator = startFacilitator(chain);
  payTo = chain.accounts[1].address;
  alice = payer(chain.accounts[2]);
  await chain.mint(alice.address, 10_000_000n);
  h = await startHearth({
    env: {
      HEARTH_PLUGINS: `${import.meta.dir}/plugins`,
      HEARTH_RATE_PRICED: "0",
      HEARTH_RATE_READS: "0",
      HEARTH_RATE_WRITES: "0",
      ...x402Settings(chain, facilitator, payTo),
      // Accounts are charged here, so one short of credits can be offered x402.
      HEARTH_METER_ACCOUNTS: "all",
    },
  });
});

afterAll(async () => {
  await h?.stop();
  facilitator?.stop();
  await chain?.stop();
});

const paidRows = () => h.rt.store.rdb.select().from(payX402).all();

async function challenge(path = "meter/echo", args: Record<string, unknown> = { text: "hi" }) {
  const r = await h.call(path, args);
  expect(r.status).toBe(402);
  return challengeOf(r.headers);
}

/** Calls and checks that nothing ran, nothing was paid and nothing was recorded. */
async function refusedWithNothingDone(path: string, args: Record<string, unknown>, headers: Record<string, string>) {
  const before = { runs: runs.echo ?? 0, payer: await chain.balance(alice.address), payee: await chain.balance(payTo), rows: (await paidRows()).length };
  const r = await h.call(path, args, { headers });
  expect(runs.echo ?? 0).toBe(before.runs);
  expect(await chain.balance(alice.address)).toBe(before.payer);
  expect(await chain.balance(payTo)).toBe(before.payee);
  expect((await paidRows()).length).toBe(before.rows);
  return r;
}

describe("x402 over HTTP", () => {
  test("a stranger on a metered method gets a standard x402 challenge", async () => {
    const r = await h.call("meter/echo", { text: "hi" });
    expect(r.status).toBe(402);
    expect(r.body.error.kind).toBe("payment_required");
    const c = challengeOf(r.headers);
    expect(c.x402Version).toBe(2);
    expect(c.resource.url).toBe(`${h.url}/api/v1/meter/echo`);
    expect(c.resource.description).toContain("Echoes");
    expect(c.accepts).toEqual([
      { scheme: "exact", network: NETWORK, asset: chain.usdc, amount: PRICE_ATOMIC.toString(), payTo, maxTimeoutSeconds: 120, extra: { name: "USD Coin", version: "2" } },
    ]);
    // The body carries the same challenge for clients that read bodies.
    expect(r.body.error.accepts).toEqual(c.accepts);
    expect(r.body.error.x402Version).toBe(2);
  });

  test("the whole loop: 402, pay, the retry runs, the receipt and the ledger show it", async () => {
    const before = { payer: await chain.balance(alice.address), payee: await chain.balance(payTo), runs: runs.echo ?? 0 };
    const payload = await alice.pay(await challenge());
    const r = await h.call("meter/echo", { text: "paid" }, { headers: { "PAYMENT-SIGNATURE": alice.header(payload) } });
    expect(r.status).toBe(200);
    expect(r.body.result.text).toBe("paid");
    expect(runs.echo).toBe(before.runs + 1);
    const receipt = receiptOf(r.headers);
    expect(receipt.success).toBe(true);
    expect(receipt.network).toBe(NETWORK);
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await chain.balance(alice.address)).toBe(before.payer - PRICE_ATOMIC);
    expect(await chain.balance(payTo)).toBe(before.payee + PRICE_ATOMIC);
    const row = (await paidRows()).find((p) => p.transaction === receipt.transaction)!;
    expect(row).toMatchObject({ method: "meter/echo", credits: 3, amount: PRICE_ATOMIC.toString(), payer: alice.address.toLowerCase(), requestId: r.headers.get("x-request-id")! });

    // The same payment again is refused.
    const again = await refusedWithNothingDone("meter/echo", { text: "again" }, { "PAYMENT-SIGNATURE": alice.header(payload) });
    expect(again.status).toBe(402);
    expect(again.body.error.message).toContain("already used");
  });

  test("X-PAYMENT (x402 v1) is accepted too, with an X-PAYMENT-RESPONSE receipt", async () => {
    const c = await challenge();
    const a = c.accepts[0];
    const v1 = await alice.pay({
      x402Version: 1,
      accepts: [
        { scheme: "exact", network: "base-sepolia", maxAmountRequired: a.amount, resource: c.resource.url, description: c.resource.description, mimeType: "application/json", payTo: a.payTo, maxTimeoutSeconds: a.maxTimeoutSeconds, asset: a.asset, extra: a.extra },
      ],
    } as never);
    expect(v1.x402Version).toBe(1);
    const r = await h.call("meter/echo", { text: "v1" }, { headers: { "X-PAYMENT": alice.header(v1) } });
    expect(r.status).toBe(200);
    expect(receiptOf(r.headers, "x-payment-response").success).toBe(true);
  });

  test("a bad signature is refused with nothing run or charged", async () => {
    const payload = await alice.pay(await challenge());
    const sig = (payload.payload as { signature: string }).signature;
    const flipped = sig.slice(0, 10) + (sig[10] === "a" ? "b" : "a") + sig.slice(11);
    const bad = { ...payload, payload: { ...payload.payload, signature: flipped } } as PaymentPayload;
    const r = await refusedWithNothingDone("meter/echo", { text: "x" }, { "PAYMENT-SIGNATURE": alice.header(bad) });
    expect(r.status).toBe(402);
    expect(r.body.error.message).toContain("payment refused");
    expect(r.headers.get("payment-required")).toBeTruthy();
  });

  test("a payment for the wrong amount is refused with nothing run or charged", async () => {
    const c = await challenge();
    const cheap = await alice.pay({ ...c, accepts: [{ ...c.accepts[0], amount: "10000" }] });
    const r = await refusedWithNothingDone("meter/echo", { text: "x" }, { "PAYMENT-SIGNATURE": alice.header(cheap) });
    expect(r.status).toBe(402);
    expect(r.body.error.message).toContain("30000");
  });

  test("an expired authorization is refused with nothing run or charged", async () => {
    const c = await challenge();
    const a = c.accepts[0];
    const now = Math.floor(Date.now() / 1000);
    const authorization = { from: alice.address, to: payTo, value: a.amount, validAfter: String(now - 3600), validBefore: String(now - 60), nonce: toHex(crypto.getRandomValues(new Uint8Array(32))) };
    const signature = await chain.accounts[2].signTypedData({
      domain: { name: "USD Coin", version: "2", chainId: CHAIN_ID, verifyingContract: chain.usdc },
      types: authorizationTypes,
      primaryType: "TransferWithAuthorization",
      message: { ...authorization, value: BigInt(authorization.value), validAfter: BigInt(authorization.validAfter), validBefore: BigInt(authorization.validBefore) },
    });
    const expired: PaymentPayload = { x402Version: 2, resource: c.resource, accepted: a, payload: { signature, authorization } };
    const r = await refusedWithNothingDone("meter/echo", { text: "x" }, { "PAYMENT-SIGNATURE": alice.header(expired) });
    expect(r.status).toBe(402);
  });

  test("a payment on a method that needs an account is 403", async () => {
    const c = await challenge();
    const payload = await alice.pay(c);
    const r = await h.call("meter/mine", {}, { headers: { "PAYMENT-SIGNATURE": alice.header(payload) } });
    expect(r.status).toBe(403);
    // It was not spent, so it still pays for what it was signed for.
    const ok = await h.call("meter/echo", { text: "later" }, { headers: { "PAYMENT-SIGNATURE": alice.header(payload) } });
    expect(ok.status).toBe(200);
  });

  test("a paid call that fails is not settled, and a paid write commits with its payment", async () => {
    const before = await chain.balance(alice.address);
    const failing = await alice.pay(await challenge("meter/fail", {}));
    const r = await h.call("meter/fail", {}, { headers: { "PAYMENT-SIGNATURE": alice.header(failing) } });
    expect(r.status).toBe(500);
    expect(await chain.balance(alice.address)).toBe(before);

    const w = await alice.pay(await challenge("meter/record", { text: "paid write" }));
    const ok = await h.call("meter/record", { text: "paid write" }, { headers: { "PAYMENT-SIGNATURE": alice.header(w) } });
    expect(ok.status).toBe(200);
    expect((await h.rt.store.rdb.select().from(activity).all()).some((a) => a.text === "paid write")).toBe(true);
    expect(await chain.balance(alice.address)).toBe(before - 20_000n);
  });

  test("a settlement that fails undoes the paid work and answers 402 with the failed receipt", async () => {
    const before = { payer: await chain.balance(alice.address), rows: (await paidRows()).length };
    const payload = await alice.pay(await challenge("meter/record", { text: "unpaid write" }));
    facilitator.fail.nextSettle = "insufficient_funds";
    const r = await h.call("meter/record", { text: "unpaid write" }, { headers: { "PAYMENT-SIGNATURE": alice.header(payload) } });
    expect(r.status).toBe(402);
    expect(r.body.error.message).toContain("settlement failed");
    expect(receiptOf(r.headers)).toMatchObject({ success: false, errorReason: "insufficient_funds" });
    expect((await h.rt.store.rdb.select().from(activity).all()).some((a) => a.text === "unpaid write")).toBe(false);
    expect(await chain.balance(alice.address)).toBe(before.payer);
    expect((await paidRows()).length).toBe(before.rows);
  });

  test("an unreachable facilitator is a 503 and nothing runs", async () => {
    const dead = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const port = dead.port;
    dead.stop(true);
    const off = await startHearth({ env: { HEARTH_PLUGINS: `${import.meta.dir}/plugins`, X402_PAY_TO: payTo, X402_FACILITATOR_URL: `http://127.0.0.1:${port}`, X402_NETWORK: NETWORK, X402_ASSET: chain.usdc } });
    try {
      const c = challengeOf((await off.call("meter/echo", { text: "x" })).headers);
      const payload = await alice.pay(c);
      const ran = runs.echo ?? 0;
      const r = await off.call("meter/echo", { text: "x" }, { headers: { "PAYMENT-SIGNATURE": alice.header(payload) } });
      expect(r.status).toBe(503);
      expect(r.body.error.retry).toBe(true);
      expect(runs.echo ?? 0).toBe(ran);
    } finally {
      await off.stop();
    }
  });

  test("a garbled payment header is a 400 naming it", async () => {
    const r = await h.call("meter/echo", { text: "x" }, { headers: { "PAYMENT-SIGNATURE": "%%%not base64%%%" } });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("PAYMENT-SIGNATURE");
  });

  test("an account short of credits gets the same challenge a stranger gets", async () => {
    const t = await h.token("broke");
    const r = await h.call("meter/echo", { text: "x" }, { token: t });
    expect(r.status).toBe(402);
    expect(challengeOf(r.headers).accepts[0].amount).toBe(PRICE_ATOMIC.toString());
  });

  test("an account short of credits that pays with its token still sent is served, settled once, its credits untouched", async () => {
    const t = await h.token("short");
    await h.grant("short", 1);
    const ledger = async () => (await h.call("credits/balance", {}, { token: t })).body.result as { balance: number; entries: unknown[] };
    const refused = await h.call("meter/echo", { text: "x" }, { token: t });
    expect(refused.status).toBe(402);
    expect(refused.body.accepts).toHaveLength(1);

    const before = { payer: await chain.balance(alice.address), payee: await chain.balance(payTo), rows: (await paidRows()).length, settles: facilitator.calls.settle, runs: runs.echo ?? 0, ledger: await ledger() };
    const payload = await alice.pay(challengeOf(refused.headers));
    const r = await h.call("meter/echo", { text: "paid with a token" }, { token: t, headers: { "PAYMENT-SIGNATURE": alice.header(payload) } });
    expect(r.status).toBe(200);
    expect(r.body.result.text).toBe("paid with a token");
    expect(receiptOf(r.headers).success).toBe(true);
    expect(runs.echo ?? 0).toBe(before.runs + 1);
    expect(facilitator.calls.settle).toBe(before.settles + 1);
    expect((await paidRows()).length).toBe(before.rows + 1);
    expect(await chain.balance(alice.address)).toBe(before.payer - PRICE_ATOMIC);
    expect(await chain.balance(payTo)).toBe(before.payee + PRICE_ATOMIC);
    expect(await ledger()).toEqual(before.ledger);

    // Over MCP the same: a token on the session, the payment in _meta.
    const m = await mcpClient(h.url, { token: t });
    try {
      const first = (await m.client.callTool({ name: "meter_echo", arguments: { text: "mcp" } })) as any;
      expect(first.isError).toBe(true);
      const paid = (await m.client.callTool({ name: "meter_echo", arguments: { text: "mcp with a token" }, _meta: { "x402/payment": await alice.pay(first.structuredContent) } })) as any;
      expect(paid.isError).toBeFalsy();
      expect(paid.structuredContent.result.text).toBe("mcp with a token");
      expect(paid._meta["x402/payment-response"].success).toBe(true);
    } finally {
      await m.close();
    }
    expect(await ledger()).toEqual(before.ledger);
  });
});

describe("x402 over MCP", () => {
  test("the challenge is also in the result's _meta, and a base64 payment in _meta pays, as older MCP x402 clients do it", async () => {
    const m = await mcpClient(h.url);
    try {
      const first = (await m.client.callTool({ name: "meter_echo", arguments: { text: "mcp" } })) as any;
      expect(first.isError).toBe(true);
      const challenged = first._meta["x402/error"];
      expect(challenged).toMatchObject({ x402Version: 2, resource: { url: `${h.url}/api/v1/meter/echo` } });
      expect(challenged.accepts).toEqual(first.structuredContent.accepts);
      expect(challenged.accepts[0].amount).toBe(PRICE_ATOMIC.toString());

      const before = await chain.balance(alice.address);
      // agents/x402's withX402Client sends btoa(JSON.stringify(payload)).
      const token = btoa(JSON.stringify(await alice.pay(challenged)));
      const paid = (await m.client.callTool({ name: "meter_echo", arguments: { text: "mcp base64" }, _meta: { "x402/payment": token } })) as any;
      expect(paid.isError).toBeFalsy();
      expect(paid.structuredContent.result.text).toBe("mcp base64");
      expect(paid._meta["x402/payment-response"].success).toBe(true);
      expect(await chain.balance(alice.address)).toBe(before - PRICE_ATOMIC);

      const garbled = (await m.client.callTool({ name: "meter_echo", arguments: { text: "x" }, _meta: { "x402/payment": "%%%not base64%%%" } })) as any;
      expect(garbled.isError).toBe(true);
      expect(garbled.structuredContent.error).toMatchObject({ status: 400, field: "_meta.x402/payment" });
      expect(await chain.balance(alice.address)).toBe(before - PRICE_ATOMIC);
    } finally {
      await m.close();
    }
  });

  test("a 2026-07-28 client, with no session, is challenged and pays in _meta the same way", async () => {
    const client = new ClientV2({ name: "x402-2026", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await client.connect(new HttpV2(new URL(`${h.url}/mcp`)));
    try {
      const first = (await client.callTool({ name: "meter_echo", arguments: { text: "mcp" } })) as any;
      expect(first.isError).toBe(true);
      expect(first._meta["x402/error"].accepts[0].amount).toBe(PRICE_ATOMIC.toString());
      const before = await chain.balance(alice.address);
      const payload = await alice.pay(first._meta["x402/error"]);
      const paid = (await client.callTool({ name: "meter_echo", arguments: { text: "mcp 2026" }, _meta: { "x402/payment": payload } })) as any;
      expect(paid.isError).toBeFalsy();
      expect(paid.structuredContent.result.text).toBe("mcp 2026");
      expect(paid._meta["x402/payment-response"].success).toBe(true);
      expect(await chain.balance(alice.address)).toBe(before - PRICE_ATOMIC);
    } finally {
      await client.close();
    }
  });

  test("payment required is a tool error with PaymentRequired; the paid retry carries the receipt in _meta", async () => {
    const m = await mcpClient(h.url);
    try {
      const first = (await m.client.callTool({ name: "meter_echo", arguments: { text: "mcp" } })) as { isError?: boolean; structuredContent?: any; content: { type: string; text: string }[] };
      expect(first.isError).toBe(true);
      expect(first.structuredContent.x402Version).toBe(2);
      expect(first.structuredContent.accepts[0].amount).toBe(PRICE_ATOMIC.toString());
      const wrapped = JSON.parse(first.content[0].text);
      expect(wrapped["x402/error"].code).toBe(402);
      expect(wrapped["x402/error"].data.accepts).toEqual(first.structuredContent.accepts);

      const before = await chain.balance(alice.address);
      const payload = await alice.pay(first.structuredContent);
      const paid = (await m.client.callTool({ name: "meter_echo", arguments: { text: "mcp paid" }, _meta: { "x402/payment": payload } })) as any;
      expect(paid.isError).toBeFalsy();
      expect(paid.structuredContent.result.text).toBe("mcp paid");
      expect(paid._meta["x402/payment-response"].success).toBe(true);
      expect(await chain.balance(alice.address)).toBe(before - PRICE_ATOMIC);

      const replay = (await m.client.callTool({ name: "meter_echo", arguments: { text: "again" }, _meta: { "x402/payment": payload } })) as any;
      expect(replay.isError).toBe(true);
      expect(replay.structuredContent.error).toContain("already used");
    } finally {
      await m.close();
    }
  });
});
