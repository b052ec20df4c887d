// Paid effects that cannot be undone, paid by the official x402 clients
// (@x402/fetch, x402-fetch) on a local chain: a text, a built app, a model
// run happen only once their payment settled; a settlement that fails leaves
// nothing behind; and a payer cannot have more handlers run at once than its
// balance on the chain pays for.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { wrapFetchWithPayment as wrapFetchV2 } from "@x402/fetch";
import { createWalletClient, defineChain, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { wrapFetchWithPayment as wrapFetchV1 } from "x402-fetch";
import { payLedger, payX402 } from "../../core/pay/schema.ts";
import { startOpenAiFixture, type OpenAiFixture } from "../fixtures/openai/server.ts";
import { startTwilio } from "../fixtures/twilio/server.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { CHAIN_ID, startChain, startFacilitator, type Chain, x402Settings } from "./chain/evm.ts";
import { payer } from "./client.ts";
import { runs } from "./plugins/meter/index.ts";

const SID = "AC0123456789abcdef0123456789abcdef";
const TOKEN = "f00dfeedf00dfeedf00dfeedf00dfeed";
/** A credit is 10^4 atomic units of the test USDC. */
const ATOMIC = 10_000n;
/** sms/send's price for a one-segment text: SMS_SEGMENT_CREDITS, 2 by default (it is priced by its text, so the list says null). */
const TEXT = 2;

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Water tracker</title>
<meta name="description" content="Counts the glasses of water you drink each day.">
<style>body{font-family:system-ui}</style>
</head>
<body>
<h1>Water</h1>
<output id="glasses">0</output>
<button id="add" type="button">One more glass</button>
<script>
let glasses = 0;
const out = document.getElementById("glasses");
hearth.store.get("glasses").then((v) => { glasses = v || 0; out.textContent = glasses; });
document.getElementById("add").onclick = () => { glasses++; out.textContent = glasses; hearth.store.set("glasses", glasses); };
</script>
</body>
</html>`;

let chain: Chain;
let facilitator: ReturnType<typeof startFacilitator>;
let ai: OpenAiFixture;
let tw: ReturnType<typeof startTwilio>;
let h: Hearth;
let payTo: `0x${string}`;
const prices: Record<string, number> = {};

beforeAll(async () => {
  chain = await startChain();
  facilitator = startFacilitator(chain);
  ai = await startOpenAiFixture();
  tw = startTwilio({ sid: SID, token: TOKEN });
  payTo = chain.accounts[1].address;
  h = await startHearth({
    env: {
      HEARTH_PLUGINS: `${import.meta.dir}/plugins`,
      HEARTH_RATE_PRICED: "0",
      HEARTH_RATE_READS: "0",
      HEARTH_RATE_WRITES: "0",
      // Accounts pay here, so one without credits is offered x402.
      HEARTH_METER_ACCOUNTS: "all",
      ...x402Settings(chain, facilitator, payTo),
      AI_BASE_URL: ai.base,
      AI_MODEL: "builder",
      AI_OLLAMA_URL: "",
      UPSTREAM_RETRY_MS: "0",
      AGENT_MAX_STEPS: "4",
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: TOKEN,
      TWILIO_FROM: "+15005550006",
      TWILIO_URL: tw.url,
    },
  });
  const list = (await (await fetch(`${h.url}/api/v1/prices`)).json()).result.methods as { method: string; credits: number }[];
  for (const m of list) prices[m.method] = m.credits;
});

afterAll(async () => {
  await h?.stop();
  tw?.stop();
  ai?.stop();
  facilitator?.stop();
  await chain?.stop();
});

/** A payer of its own holding exactly `atomic` USDC. */
async function wallet(atomic: bigint) {
  const account = privateKeyToAccount(generatePrivateKey());
  await chain.mint(account.address, atomic);
  return account;
}

/** A v1 client's wallet: a viem wallet client on the test chain ("base-sepolia" to v1 clients). */
const viemWallet = (account: ReturnType<typeof privateKeyToAccount>) =>
  createWalletClient({
    account,
    chain: defineChain({ id: CHAIN_ID, name: "test", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [chain.rpc] } } }),
    transport: http(chain.rpc),
  });

const settledRows = async () => (await h.rt.store.rdb.select().from(payX402).all()).length;

/** Answers the model's scripted replies nobody asked for, so the next test starts with none waiting. */
async function drain() {
  while (ai.left) await fetch(`${ai.base}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
}

const post = (path: string, token: string, args: Record<string, unknown>): [string, RequestInit] => [
  `${h.url}/api/v1/${path}`,
  { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify(args) },
];

describe("an effect that cannot be undone happens only once paid", () => {
  test("three apps/build at once, paid with @x402/fetch from a wallet holding one build, build one app and ask the model once", async () => {
    const token = await h.token("builder");
    const price = BigInt(prices["apps/build"]) * ATOMIC;
    const from = await wallet(price);
    ai.reply(...[1, 2, 3].map(() => ({ say: "```html\n" + page + "\n```" })));
    const before = { posts: ai.posts.length, payee: await chain.balance(payTo), rows: await settledRows() };
    const pay = wrapFetchV2(fetch, payer(from).client);
    const answers = await Promise.all([1, 2, 3].map((i) => pay(...post("apps/build", token, { prompt: `a water tracker, take ${i}` }))));
    const statuses = answers.map((r) => r.status).sort();
    const asked = ai.posts.length - before.posts;
    await drain();
    expect(statuses).toEqual([200, 402, 402]);
    const ok = answers.find((r) => r.status === 200)!;
    expect(decodePaymentResponseHeader(ok.headers.get("payment-response")!).success).toBe(true);
    expect(await h.rows("SELECT a.id FROM apps a JOIN accounts u ON u.id = a.owner WHERE u.username = ?", "builder")).toHaveLength(1);
    expect(asked).toBe(1);
    expect(await chain.balance(from.address)).toBe(0n);
    expect((await chain.balance(payTo)) - before.payee).toBe(price);
    expect((await settledRows()) - before.rows).toBe(1);
  });

  test("three sms/send at once, paid with x402-fetch from a wallet holding one text, send one text", async () => {
    const token = await h.token("texter");
    const args = { to: "+447700900123", text: "Dinner at eight" };
    const atomic = BigInt(TEXT) * ATOMIC;
    const from = await wallet(atomic);
    const before = { sent: tw.sent.length, payee: await chain.balance(payTo), rows: await settledRows() };
    const pay = wrapFetchV1(fetch, viemWallet(from) as never);
    const answers = await Promise.all([1, 2, 3].map(() => pay(...post("sms/send", token, args))));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 402, 402]);
    expect(tw.sent.length - before.sent).toBe(1);
    expect(await chain.balance(from.address)).toBe(0n);
    expect((await chain.balance(payTo)) - before.payee).toBe(atomic);
    expect((await settledRows()) - before.rows).toBe(1);
    const history = (await h.call("sms/history", {}, { token })).body.result;
    expect(history).toHaveLength(1);
  });

  test("agent/ask whose settlement fails runs no model, keeps no answer for recall and leaves its tools' credits alone", async () => {
    const token = await h.token("asker");
    // One credit: short of the run's price, enough for the one tool it would call.
    await h.grant("asker", 1);
    const balance = async () => (await h.call("credits/balance", {}, { token })).body.result.balance;
    expect(prices["agent/ask"]).toBeGreaterThan(1);
    const from = await wallet(BigInt(prices["agent/ask"]) * ATOMIC);
    ai.reply({ calls: [{ name: "meter_segments", arguments: JSON.stringify({ text: "hello" }) }] }, { say: "Done." });
    const before = { posts: ai.posts.length, payer: await chain.balance(from.address), rows: await settledRows(), balance: await balance() };
    expect(before.balance).toBe(1);
    facilitator.fail.nextSettle = "insufficient_funds";
    const r = await wrapFetchV2(fetch, payer(from).client)(...post("agent/ask", token, { prompt: "Count the segments of hello." }));
    const asked = ai.posts.length - before.posts;
    await drain();
    expect(r.status).toBe(402);
    expect(((await r.json()) as any).error.message).toContain("settlement failed");
    expect(asked).toBe(0);
    expect((await h.call("recall/list", {}, { token })).body.result).toEqual([]);
    expect(await balance()).toBe(before.balance);
    expect(await chain.balance(from.address)).toBe(before.payer);
    expect((await settledRows()) - before.rows).toBe(0);
  });

  test("a paid agent/ask runs once its payment settled: the run is paid in USDC, its tool in credits, and recall keeps the answer", async () => {
    const token = await h.token("asker2");
    await h.grant("asker2", 1);
    const balance = async () => (await h.call("credits/balance", {}, { token })).body.result.balance;
    const atomic = BigInt(prices["agent/ask"]) * ATOMIC;
    const from = await wallet(atomic);
    ai.reply({ calls: [{ name: "meter_segments", arguments: JSON.stringify({ text: "hello" }) }] }, { say: "One segment." });
    const before = { payee: await chain.balance(payTo), rows: await settledRows() };
    const r = await wrapFetchV2(fetch, payer(from).client)(...post("agent/ask", token, { prompt: "Count the segments of hello." }));
    await drain();
    expect(r.status).toBe(200);
    expect(decodePaymentResponseHeader(r.headers.get("payment-response")!).success).toBe(true);
    expect(await chain.balance(from.address)).toBe(0n);
    expect((await chain.balance(payTo)) - before.payee).toBe(atomic);
    expect((await settledRows()) - before.rows).toBe(1);
    // The tool the run called cost its one credit, taken from the account.
    expect(await balance()).toBe(0);
    expect((await h.call("recall/list", {}, { token })).body.result).toHaveLength(1);
  });

  test("an irreversible call that fails after its payment settled gives the account what it paid as credits", async () => {
    const token = await h.token("unlucky");
    const credits = TEXT;
    const atomic = BigInt(credits) * ATOMIC;
    const from = await wallet(atomic);
    const account = (await h.row<{ id: string }>("SELECT id FROM accounts WHERE username = ?", "unlucky"))!.id;
    const before = { sent: tw.sent.length, payee: await chain.balance(payTo) };
    tw.failOnce(500);
    const r = await wrapFetchV2(fetch, payer(from).client)(...post("sms/send", token, { to: "+447700900124", text: "Running late" }));
    expect(r.status).toBe(503);
    const body = (await r.json()) as any;
    expect(body.error.credited).toBe(credits);
    expect(body.error.message).toContain("added to your balance");
    expect(decodePaymentResponseHeader(r.headers.get("payment-response")!).success).toBe(true);
    expect(tw.sent.length).toBe(before.sent);
    expect((await chain.balance(payTo)) - before.payee).toBe(atomic);
    const entries = (await h.rt.store.rdb.select().from(payLedger).all()).filter((e) => e.account === account);
    expect(entries.map((e) => [e.reason, e.delta, e.method])).toEqual([["refund", credits, "sms/send"]]);
    expect((await h.call("credits/balance", {}, { token })).body.result.balance).toBe(credits);
  });
});

describe("a paid write outside a transaction is undone when its settlement fails", () => {
  test("meter/aside, whose settlement fails, leaves no activity line and no credits taken by the call it made", async () => {
    const token = await h.token("aside");
    // One credit: short of the call's price, enough for the priced call it makes.
    await h.grant("aside", 1);
    const balance = async () => (await h.call("credits/balance", {}, { token })).body.result.balance;
    const lines = async (text: string) => (await h.rows("SELECT id FROM activity WHERE text = ?", text)).length;
    const from = await wallet(BigInt(prices["meter/aside"]) * ATOMIC);
    const pay = wrapFetchV2(fetch, payer(from).client);

    facilitator.fail.nextSettle = "insufficient_funds";
    const failed = await pay(...post("meter/aside", token, { text: "unpaid aside" }));
    expect(failed.status).toBe(402);
    expect(((await failed.json()) as any).error.message).toContain("settlement failed");
    expect(await lines("unpaid aside")).toBe(0);
    expect(await balance()).toBe(1);
    expect(await chain.balance(from.address)).toBe(BigInt(prices["meter/aside"]) * ATOMIC);

    // Paid, the same call keeps its line and its inner call's credit, and the payment is taken once.
    const ok = await pay(...post("meter/aside", token, { text: "paid aside" }));
    expect(ok.status).toBe(200);
    expect(await lines("paid aside")).toBe(1);
    expect(await balance()).toBe(0);
    expect(await chain.balance(from.address)).toBe(0n);
  });
});

describe("a payer runs no more paid handlers at once than it can pay for", () => {
  async function fiveAtOnce(target: Hearth) {
    const atomic = BigInt(prices["meter/echo"]) * ATOMIC;
    const from = await wallet(atomic);
    const ran = runs.echo ?? 0;
    const before = { payee: await chain.balance(payTo), settles: facilitator.calls.settle };
    const pay = wrapFetchV2(fetch, payer(from).client);
    const answers = await Promise.all([1, 2, 3, 4, 5].map((i) => pay(`${target.url}/api/v1/meter/echo?text=${i}`)));
    // Any other answer is shown with its body, so a failure says which refusal it was.
    const seen = await Promise.all(answers.map(async (r) => (r.status === 200 || r.status === 402 ? r.status : `${r.status} ${await r.clone().text()}`)));
    expect(seen.sort()).toEqual([200, 402, 402, 402, 402]);
    expect((runs.echo ?? 0) - ran).toBe(1);
    expect(await chain.balance(from.address)).toBe(0n);
    expect((await chain.balance(payTo)) - before.payee).toBe(atomic);
  }

  test("five authorizations from a payer holding one call's price run the handler once (one payment in flight per payer)", async () => {
    await fiveAtOnce(h);
  });

  test("with X402_RPC_URL the payer's balance on the chain bounds what it has in flight", async () => {
    // The provider behind meter/lookup answers only once two lookups wait on it, so both calls are in flight together.
    const waiting: (() => void)[] = [];
    const provider = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (req) =>
        new Promise<Response>((resolve) => {
          waiting.push(() => resolve(Response.json({ key: new URL(req.url).searchParams.get("key") })));
          if (waiting.length === 2) for (const go of waiting.splice(0)) go();
        }),
    });
    const rpc = await startHearth({
      env: {
        HEARTH_PLUGINS: `${import.meta.dir}/plugins`,
        HEARTH_RATE_PRICED: "0",
        HEARTH_RATE_READS: "0",
        ...x402Settings(chain, facilitator, payTo),
        X402_RPC_URL: chain.rpc,
        METER_TEST_URL: `http://127.0.0.1:${provider.port}`,
      },
    });
    try {
      await fiveAtOnce(rpc);
      // A payer holding two lookups' price has both in flight at once, and both are served and paid.
      const atomic = BigInt(prices["meter/lookup"]) * ATOMIC;
      const from = await wallet(2n * atomic);
      const pay = wrapFetchV2(fetch, payer(from).client);
      const both = await Promise.all(["one", "two"].map((key) => pay(`${rpc.url}/api/v1/meter/lookup?key=${key}`)));
      expect(both.map((r) => r.status)).toEqual([200, 200]);
      expect(await chain.balance(from.address)).toBe(0n);
    } finally {
      await rpc.stop();
      provider.stop(true);
    }
  });
});
