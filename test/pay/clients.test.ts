// The x402 clients people use, each paying one call on a local chain: the v1
// clients (x402-fetch, x402-axios) read the challenge from the 402's body and
// pay with X-PAYMENT; the v2 clients (@x402/fetch, @x402/axios) read
// PAYMENT-REQUIRED and pay with PAYMENT-SIGNATURE. The facilitator checks the
// real EIP-3009 signature and settles on the chain, so each payment is real.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { wrapAxiosWithPayment } from "@x402/axios";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { wrapFetchWithPayment as wrapFetchV2 } from "@x402/fetch";
import axios from "axios";
import { createWalletClient, defineChain, http } from "viem";
import { withPaymentInterceptor } from "x402-axios";
import { decodeXPaymentResponse, wrapFetchWithPayment as wrapFetchV1 } from "x402-fetch";
import { payX402 } from "../../core/pay/schema.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { CHAIN_ID, startChain, startFacilitator, type Chain, x402Settings } from "./chain/evm.ts";
import { payer } from "./client.ts";
import { runs } from "./plugins/meter/index.ts";

let chain: Chain;
let facilitator: ReturnType<typeof startFacilitator>;
let h: Hearth;
let payTo: `0x${string}`;

beforeAll(async () => {
  chain = await startChain();
  facilitator = startFacilitator(chain);
  payTo = chain.accounts[1].address;
  await chain.mint(chain.accounts[3].address, 10_000_000n);
  h = await startHearth({
    env: {
      HEARTH_PLUGINS: `${import.meta.dir}/plugins`,
      HEARTH_RATE_PRICED: "0",
      HEARTH_RATE_READS: "0",
      HEARTH_RATE_WRITES: "0",
      ...x402Settings(chain, facilitator, payTo),
    },
  });
});

afterAll(async () => {
  await h?.stop();
  facilitator?.stop();
  await chain?.stop();
});

/** A v1 client's wallet: a viem wallet client on the test chain (84532, "base-sepolia" to v1 clients). */
const wallet = () =>
  createWalletClient({
    account: chain.accounts[3],
    chain: defineChain({ id: CHAIN_ID, name: "test", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [chain.rpc] } } }),
    transport: http(chain.rpc),
  });

/** Runs `pay` and checks that exactly `atomic` moved from the payer to the instance, in one settled payment, for one run of `method`. */
async function paysOnce(method: "echo" | "record", atomic: bigint, pay: () => Promise<{ status: number; receipt: { success: boolean; transaction: string } }>) {
  const payerAddress = chain.accounts[3].address;
  const before = { payer: await chain.balance(payerAddress), payee: await chain.balance(payTo), rows: (await h.rt.store.rdb.select().from(payX402).all()).length, runs: runs[method] ?? 0 };
  const out = await pay();
  expect(out.status).toBe(200);
  expect(out.receipt.success).toBe(true);
  expect(out.receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
  expect(await chain.balance(payerAddress)).toBe(before.payer - atomic);
  expect(await chain.balance(payTo)).toBe(before.payee + atomic);
  const rows = (await h.rt.store.rdb.select().from(payX402).all());
  expect(rows.length).toBe(before.rows + 1);
  expect(rows.at(-1)!.transaction).toBe(out.receipt.transaction);
  expect((runs[method] ?? 0) - before.runs).toBe(1);
}

describe("x402 v1 clients read the challenge from the body and pay with X-PAYMENT", () => {
  test("the 402 body carries a v1 challenge beside the error envelope", async () => {
    const r = await h.call("meter/echo", { text: "look" });
    expect(r.status).toBe(402);
    expect(r.body.error.kind).toBe("payment_required");
    expect(r.body.x402Version).toBe(1);
    expect(r.body.accepts).toEqual([
      {
        scheme: "exact",
        network: "base-sepolia",
        maxAmountRequired: "30000",
        resource: `${h.url}/api/v1/meter/echo`,
        description: "Echoes its text; costs 3 credits.",
        mimeType: "application/json",
        payTo,
        maxTimeoutSeconds: 120,
        asset: chain.usdc,
        extra: { name: "USD Coin", version: "2" },
      },
    ]);
  });

  test("x402-fetch 1.x pays a GET", async () => {
    const pay = wrapFetchV1(fetch, wallet() as never);
    await paysOnce("echo", 30_000n, async () => {
      const res = await pay(`${h.url}/api/v1/meter/echo?text=fetch-v1`);
      const body = (await res.json()) as { result: { text: string } };
      expect(body.result.text).toBe("fetch-v1");
      expect(res.headers.get("payment-response")).toBeNull();
      return { status: res.status, receipt: decodeXPaymentResponse(res.headers.get("x-payment-response")!) };
    });
  });

  test("x402-axios pays a POST with a JSON body", async () => {
    const api = withPaymentInterceptor(axios.create({ baseURL: h.url }), wallet() as never);
    await paysOnce("record", 20_000n, async () => {
      const res = await api.post("/api/v1/meter/record", { text: "axios-v1" });
      expect(res.data.result.recorded).toBe("axios-v1");
      return { status: res.status, receipt: decodeXPaymentResponse(res.headers["x-payment-response"]) };
    });
  });
});

describe("x402 v2 clients read PAYMENT-REQUIRED and pay with PAYMENT-SIGNATURE", () => {
  test("@x402/fetch pays a POST with a JSON body", async () => {
    const pay = wrapFetchV2(fetch, payer(chain.accounts[3]).client);
    await paysOnce("record", 20_000n, async () => {
      const res = await pay(`${h.url}/api/v1/meter/record`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ text: "fetch-v2" }) });
      const body = (await res.json()) as { result: { recorded: string } };
      expect(body.result.recorded).toBe("fetch-v2");
      expect(res.headers.get("x-payment-response")).toBeNull();
      return { status: res.status, receipt: decodePaymentResponseHeader(res.headers.get("payment-response")!) };
    });
  });

  test("@x402/axios pays a GET", async () => {
    const api = wrapAxiosWithPayment(axios.create({ baseURL: h.url }), payer(chain.accounts[3]).client as never);
    await paysOnce("echo", 30_000n, async () => {
      const res = await api.get("/api/v1/meter/echo", { params: { text: "axios-v2" } });
      expect(res.data.result.text).toBe("axios-v2");
      return { status: res.status, receipt: decodePaymentResponseHeader(res.headers["payment-response"]) };
    });
  });
});
