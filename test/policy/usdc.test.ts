// A credential's USDC a day for wallet/pay, beside its credits: taken in one
// conditional update before each payment is signed, and given back when the
// payment is not made. Twenty payments at once against a day that allows two
// pay exactly two, and the local chain shows exactly those two amounts moved.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { walletPayments } from "../../plugins/wallet/schema.ts";
import { signUp, type Signed } from "../auth/people.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { NETWORK, startChain, startFacilitator, type Chain } from "../pay/chain/evm.ts";

let chain: Chain;
let facilitator: ReturnType<typeof startFacilitator>;
let h: Hearth;
let s: Signed;

beforeAll(async () => {
  chain = await startChain();
  facilitator = startFacilitator(chain);
  h = await startHearth({
    env: {
      HEARTH_SIGNUP: "open",
      HEARTH_METER_ACCOUNTS: "all",
      HEARTH_PLUGINS: `${import.meta.dir}/../pay/plugins`,
      HEARTH_RATE_PRICED: "0",
      HEARTH_RATE_READS: "0",
      HEARTH_RATE_WRITES: "0",
      HEARTH_SECRET: "a test secret that is long enough",
      X402_PAY_TO: chain.accounts[1].address,
      X402_FACILITATOR_URL: facilitator.url,
      X402_NETWORK: NETWORK,
      X402_ASSET: chain.usdc,
      CHAIN_RPC_URL: chain.rpc,
      WALLET_CAP_PER_CALL: "0.50",
      WALLET_CAP_PER_DAY: "100",
    },
  });
  s = await signUp(h, "walt");
});
afterAll(async () => {
  await h?.stop();
  facilitator?.stop();
  await chain?.stop();
});

async function post(path: string, body: unknown, as: Signed = s) {
  const res = await fetch(h.url + path, { method: "POST", headers: { "content-type": "application/json", cookie: as.cookie, "x-csrf-token": as.csrf }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

const usdcToday = async (credential: string) => Number((await h.row<{ usdc: number }>("SELECT usdc FROM credential_spend WHERE credential = ?", credential))?.usdc ?? 0);

test("twenty payments at once against a day of 0.06 USDC: exactly two of 0.03 are paid, and the chain moved exactly that", async () => {
  const t = (await post("/token", { name: "payer", policy: { usdcPerDay: "0.06" } })).body.result;
  const wallet = (await h.call("wallet/address", {}, { token: t.token })).body.result.address as `0x${string}`;
  await chain.mint(wallet, 1_000_000n);
  const payee = chain.accounts[1].address;
  const before = { wallet: await chain.balance(wallet), payee: await chain.balance(payee) };
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) => h.call("wallet/pay", { tool: "meter_echo", args: { text: `echo ${i}` } }, { token: t.token, method: "POST" })),
  );
  const paid = answers.filter((r) => r.status === 200);
  const refused = answers.filter((r) => r.status === 403);
  expect(paid.length).toBe(2);
  expect(refused.length).toBe(18);
  for (const r of paid) expect(r.body.result.paid).toMatchObject({ usdc: "0.03", atomic: "30000", to: payee });
  for (const r of refused) {
    expect(r.body.error).toMatchObject({ kind: "forbidden", policy: "limit" });
    expect(r.body.error.message).toContain("past its 0.06 USDC for today");
  }
  // The chain confirms: two payments of 0.03, and nothing else left the wallet.
  expect(await chain.balance(wallet)).toBe(before.wallet - 60_000n);
  expect(await chain.balance(payee)).toBe(before.payee + 60_000n);
  const recorded = (await h.rt.store.rdb.select().from(walletPayments).all()).filter((p) => paid.some((r) => r.body.result.paid.transaction === p.transaction));
  expect(recorded.map((p) => p.amount)).toEqual(["30000", "30000"]);
  expect(await usdcToday(t.id)).toBe(60_000);
  // A free tool still runs past the limit: nothing is paid.
  const free = await h.call("wallet/pay", { tool: "meter_free" }, { token: t.token, method: "POST" });
  expect(free.status).toBe(200);
  expect(free.body.result.paid).toBeNull();
});

test("a payment that is not made gives its USDC back to the day", async () => {
  // Another account, so another wallet: an empty one.
  const t = (await post("/token", { name: "broke", policy: { usdcPerDay: "0.03" } }, await signUp(h, "bea"))).body.result;
  const wallet = (await h.call("wallet/address", {}, { token: t.token })).body.result.address as `0x${string}`;
  // An empty wallet: the facilitator refuses the payment, and the call fails.
  const failed = await h.call("wallet/pay", { tool: "meter_echo", args: { text: "no funds" } }, { token: t.token, method: "POST" });
  expect(failed.status).not.toBe(200);
  expect(await usdcToday(t.id)).toBe(0);
  await chain.mint(wallet, 30_000n);
  const ok = await h.call("wallet/pay", { tool: "meter_echo", args: { text: "funded" } }, { token: t.token, method: "POST" });
  expect(ok.status).toBe(200);
  expect(await usdcToday(t.id)).toBe(30_000);
  expect(await chain.balance(wallet)).toBe(0n);
});

test("the USDC a day is shown and edited on /token beside the credits, and refused when it is not an amount", async () => {
  const t = (await post("/token", { name: "edited" })).body.result;
  const form = new URLSearchParams({ id: t.id, csrf: s.csrf, policy_usdc_per_day: "$1.50", policy_credits_per_day: "40" });
  const res = await fetch(`${h.url}/token/policy`, { method: "POST", headers: { cookie: s.cookie, "content-type": "application/x-www-form-urlencoded" }, body: form, redirect: "manual" });
  expect(res.status).toBeLessThan(400);
  const page = await (await fetch(`${h.url}/token/policy?id=${t.id}`, { headers: { cookie: s.cookie, accept: "text/html" } })).text();
  expect(page).toContain('name="policy_usdc_per_day" value="1.5"');
  expect(page).toContain("pays at most 1.5 USDC a day");
  const bad = await post("/token/policy", { id: t.id, policy: { usdcPerDay: "1.0000001" } });
  expect(bad.status).toBe(400);
  expect(bad.body.error.field).toBe("policy.usdcPerDay");
});
