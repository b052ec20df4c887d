// one store: what a failing provider's answer and the log say of its address; nothing in it depends on the store
// Configured addresses of outside services often carry a key in their path
// (a facilitator, an RPC node, a model server). When such a service fails,
// the answer names the service and says what failed; it never carries the
// address, the key, the service's own words that quote them, or raw calldata.
// The log keeps the detail with the secrets cut out.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import { startHearth, type Hearth } from "../harness.ts";

const SECRET = "k3y-s3cr3t-0f-th3-0p3rat0r";
const KEY = "sk-live-2f9c1d7e5a3b4c6d8e0f";
const NETWORK = "eip155:84532";
const PAY_TO = "0x1111111111111111111111111111111111111111";
const ASSET = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
/** The first bytes of balanceOf's calldata: an RPC error quotes the call it failed. */
const CALLDATA = "70a08231";

const logged: string[] = [];
const logger = {
  info: (msg: string, d?: Record<string, unknown>) => logged.push(JSON.stringify({ msg, ...d })),
  warn: (msg: string, d?: Record<string, unknown>) => logged.push(JSON.stringify({ msg, ...d })),
  error: (msg: string, d?: Record<string, unknown>) => logged.push(JSON.stringify({ msg, ...d })),
  line: (d: Record<string, unknown>) => logged.push(JSON.stringify(d)),
};

/** A loopback service under a secret path that answers each request with `answer`, quoting its own address. */
function service(answer: (path: string, self: string) => Response) {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req: Request): Response => answer(new URL(req.url).pathname, req.url) });
  return { url: `http://127.0.0.1:${server.port}/v3/${SECRET}`, stop: () => server.stop(true) };
}

/** A port nothing listens on. */
function down(): string {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  const port = s.port;
  s.stop(true);
  return `http://127.0.0.1:${port}/v3/${SECRET}`;
}

const stops: (() => unknown)[] = [];
afterEach(async () => {
  for (const s of stops.splice(0).reverse()) await s();
});
afterAll(() => {
  expect(logged.filter((l) => l.includes(SECRET) || l.includes(KEY))).toEqual([]);
  // The detail is kept for the operator, addresses cut to their host.
  expect(logged.some((l) => l.includes("payment facilitator") && l.includes("[redacted]"))).toBe(true);
  expect(logged.some((l) => l.includes("chain read failed") && l.includes("[redacted]"))).toBe(true);
});

async function hearth(env: Record<string, string>): Promise<Hearth> {
  const h = await startHearth({ env: { HEARTH_RATE_PRICED: "0", HEARTH_RATE_READS: "0", ...env }, logger });
  stops.push(() => h.stop());
  return h;
}

function expectNamedNotLeaked(r: { status: number; body: unknown; headers: Headers }, status: number[], names: RegExp) {
  expect(status).toContain(r.status);
  const all = JSON.stringify(r.body) + JSON.stringify([...r.headers]) + [...r.headers.values()].map((v) => Buffer.from(v, "base64").toString("latin1")).join("");
  expect(all).not.toContain(SECRET);
  expect(all).not.toContain(KEY);
  expect(all).not.toContain(CALLDATA);
  expect((r.body as { error: { message: string } }).error.message).toMatch(names);
}

describe("the payment facilitator", () => {
  const env = (url: string) => ({ HEARTH_PLUGINS: `${import.meta.dir}/../pay/plugins`, X402_PAY_TO: PAY_TO, X402_FACILITATOR_URL: url, X402_NETWORK: NETWORK, X402_ASSET: ASSET });

  /** A payment that passes every check made here, so the facilitator is asked. */
  async function pay(h: Hearth) {
    const c = decodePaymentRequiredHeader((await h.call("meter/echo", { text: "x" })).headers.get("payment-required")!);
    const a = c.accepts[0];
    const nonce = `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`;
    const payload = {
      x402Version: 2,
      resource: c.resource,
      accepted: a,
      payload: { signature: `0x${"11".repeat(65)}`, authorization: { from: `0x${"22".repeat(20)}`, to: a.payTo, value: a.amount, validAfter: "0", validBefore: "9999999999", nonce } },
    } as unknown as PaymentPayload;
    return h.call("meter/echo", { text: "paid" }, { headers: { "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(payload) } });
  }

  test("one that fails with its own address in its answer is a 503 naming the facilitator", async () => {
    const f = service((_, self) => new Response(`upstream exploded while serving ${self}`, { status: 500 }));
    stops.push(f.stop);
    expectNamedNotLeaked(await pay(await hearth(env(f.url))), [503], /payment facilitator/);
  });

  test("one that cannot be reached is a 503 naming the facilitator", async () => {
    expectNamedNotLeaked(await pay(await hearth(env(down()))), [503], /payment facilitator/);
  });

  test("its refusal reaches the payer as its reason code, not its own words", async () => {
    const f = service((_, self) => Response.json({ isValid: false, invalidReason: "invalid_exact_evm_payload_signature", invalidMessage: `signature rejected by ${self}` }));
    stops.push(f.stop);
    const r = await pay(await hearth(env(f.url)));
    expectNamedNotLeaked(r, [402], /payment refused/);
    expect(r.body.error.message).toContain("invalid_exact_evm_payload_signature");
  });

  test("a failed settlement's receipt carries the reason code, not the facilitator's words", async () => {
    const f = service((path, self) =>
      path.endsWith("/verify")
        ? Response.json({ isValid: true, payer: `0x${"22".repeat(20)}` })
        : Response.json({ success: false, errorReason: "insufficient_funds", errorMessage: `transfer reverted at ${self}`, transaction: "", network: NETWORK }),
    );
    stops.push(f.stop);
    const r = await pay(await hearth(env(f.url)));
    expectNamedNotLeaked(r, [402], /settlement failed: insufficient_funds/);
    expect(r.headers.get("payment-response")).toBeTruthy();
  });
});

describe("the chain's RPC node", () => {
  const env = (url: string) => ({ HEARTH_SECRET: "a test secret that is long enough", CHAIN_RPC_URL: url, X402_ASSET: ASSET });

  test("one that answers an error quoting its address and the call is a 5xx naming the node", async () => {
    const node = service((_, self) => Response.json({ jsonrpc: "2.0", id: 0, error: { code: -32000, message: `rate limited for ${self}` } }));
    stops.push(node.stop);
    const h = await hearth(env(node.url));
    expectNamedNotLeaked(await h.call("wallet/balance", {}, { token: await h.token("walt") }), [502, 503], /RPC node/);
  });

  test("one that fails over HTTP is a 5xx naming the node", async () => {
    const node = service((_, self) => new Response(`no such key: ${self}`, { status: 401 }));
    stops.push(node.stop);
    const h = await hearth(env(node.url));
    expectNamedNotLeaked(await h.call("wallet/balance", {}, { token: await h.token("walt") }), [502, 503], /RPC node/);
  });

  test("one that cannot be reached is a 503 naming the node", async () => {
    const h = await hearth(env(down()));
    expectNamedNotLeaked(await h.call("wallet/balance", {}, { token: await h.token("walt") }), [503], /RPC node/);
  });
});

describe("the model server", () => {
  test("a refusal that quotes the key and the address reaches the caller without them", async () => {
    const ai = service((_, self) => Response.json({ error: { message: `Incorrect API key provided: ${KEY} for ${self}` } }, { status: 401 }));
    stops.push(ai.stop);
    const h = await hearth({ AI_BASE_URL: `${ai.url}/v1`, AI_API_KEY: KEY, AI_MODEL: "gpt-test", HEARTH_METERING: "off" });
    const r = await h.call("text/summarise", { text: "A few words to summarise for the test." });
    expectNamedNotLeaked(r, [502], /AI provider/);
    expect(r.body.error.message).toContain("Incorrect API key provided");
  });
});
