// An x402 payment on a call held as an MCP task. The payment is taken when
// the call runs, and a task runs on the client's poll after the owner
// approves, long after the authorization the payer signed (good for
// X402_MAX_TIMEOUT_SECONDS) may have run out; taken at once, it would pay for
// a call that may never run. So such a call is refused at the start, before
// the owner is asked: nothing runs, nothing is verified or settled, the chain
// does not move and no credit is charged. The same call paid from the
// account's credits is a task that runs once on approval and is charged once.
// Paid through the official x402 client on the local chain.
import "../mcp/patient.ts";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { payX402 } from "../../core/pay/schema.ts";
import { signUp, type Signed } from "../auth/people.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { mcpClient, PATIENT, rpc } from "../mcp/client.ts";
import { startChain, startFacilitator, x402Settings, type Chain } from "../pay/chain/evm.ts";
import { challengeOf, payer } from "../pay/client.ts";
import { runs } from "../pay/plugins/meter/index.ts";

let chain: Chain;
let facilitator: ReturnType<typeof startFacilitator>;
let h: Hearth;
let s: Signed;
let token: string;
let payTo: `0x${string}`;
let bob: ReturnType<typeof payer>;

beforeAll(async () => {
  chain = await startChain();
  facilitator = startFacilitator(chain);
  payTo = chain.accounts[1].address;
  bob = payer(chain.accounts[2]);
  await chain.mint(bob.address, 10_000_000n);
  h = await startHearth({
    env: {
      HEARTH_SIGNUP: "open",
      HEARTH_METER_ACCOUNTS: "all",
      HEARTH_PLUGINS: `${import.meta.dir}/../pay/plugins`,
      HEARTH_RATE_PRICED: "0",
      HEARTH_RATE_READS: "0",
      HEARTH_RATE_WRITES: "0",
      HEARTH_APPROVAL_SECONDS: "300",
      ...x402Settings(chain, facilitator, payTo),
    },
  });
  s = await signUp(h, "bob");
  // A token whose every meter/echo waits for bob's approval.
  const made = await fetch(`${h.url}/token`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie: s.cookie, "x-csrf-token": s.csrf },
    body: JSON.stringify({ name: "Paying assistant", policy: { methods: { "meter/echo": "ask" } } }),
  });
  token = ((await made.json()) as any).result.token;
});
afterAll(async () => {
  await h?.stop();
  facilitator?.stop();
  await chain?.stop();
});

const charged = async () => (await h.rows<{ method: string; delta: number }>("SELECT method, delta FROM pay_ledger WHERE reason = 'charge' ORDER BY id")).map((r) => [r.method, Number(r.delta)]);
const waiting = async () => ((await (await fetch(`${h.url}/approvals`, { headers: { cookie: s.cookie } })).json()) as any).result.waiting as any[];
/** Everything a payment or a run would move. */
const state = async () => ({
  runs: runs.echo ?? 0,
  verifies: facilitator.calls.verify,
  settles: facilitator.calls.settle,
  payer: await chain.balance(bob.address),
  payee: await chain.balance(payTo),
  paid: (await h.rt.store.rdb.select().from(payX402).all()).length,
  charged: await charged(),
  waiting: (await waiting()).length,
});
/** bob's signed payment for one meter/echo, from the challenge a stranger is given. */
const payment = async () => {
  const r = await h.call("meter/echo", { text: "price?" });
  expect(r.status).toBe(402);
  return bob.pay(challengeOf(r.headers));
};

test("2025-11-25: a task paid with x402 is refused at the start; nothing is asked, run, verified, settled or charged", async () => {
  const before = await state();
  const c = await mcpClient(h.url, { token });
  try {
    const refused = c.client.request(
      { method: "tools/call", params: { name: "meter_echo", arguments: { text: "held and paid" }, _meta: { "x402/payment": await payment() }, task: { ttl: 3_600_000 } } },
      CreateTaskResultSchema,
      PATIENT,
    );
    await expect(refused).rejects.toThrow(/cannot carry one/);
    const e = (await refused.catch((x) => x)) as any;
    expect(e.code).toBe(-32602);
    expect(e.data.error).toMatchObject({ status: 400, kind: "invalid_argument", field: "_meta.x402/payment" });
  } finally {
    await c.close();
  }
  expect(await state()).toEqual(before);
  expect(await h.rows("SELECT id FROM mcp_tasks")).toEqual([]);
});

test("2026-07-28 with the Tasks extension: the same call is the tool's 400, and nothing moves", async () => {
  const before = await state();
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
    "x402/payment": await payment(),
  };
  const r = await rpc(
    h.url,
    "tools/call",
    { name: "meter_echo", arguments: { text: "held and paid" }, _meta: meta },
    { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "meter_echo" },
  );
  expect(r.status).toBe(200);
  expect(r.body.result.resultType).toBe("complete");
  expect(r.body.result.isError).toBe(true);
  expect(r.body.result.structuredContent.error).toMatchObject({ status: 400, field: "_meta.x402/payment" });
  expect(r.body.result.structuredContent.error.message).toContain("cannot carry one");
  expect(await state()).toEqual(before);
});

test("paid from the account's credits instead, the task runs once when approved and is charged once; the chain does not move", async () => {
  await h.grant("bob", 10);
  const before = await state();
  const c = await mcpClient(h.url, { token });
  try {
    const created = await c.client.request({ method: "tools/call", params: { name: "meter_echo", arguments: { text: "held, on credits" }, task: { ttl: 3_600_000 } } }, CreateTaskResultSchema, PATIENT);
    // Held: nothing ran or was charged yet.
    expect(await state()).toEqual({ ...before, waiting: before.waiting + 1 });
    const asked = (await waiting()).find((w) => w.args.includes("held, on credits"));
    const r = await fetch(`${h.url}/approvals/decide`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: s.cookie, "x-csrf-token": s.csrf },
      body: JSON.stringify({ id: asked.id, decision: "approve" }),
    });
    expect(r.status).toBe(200);
    const result = (await c.client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema, PATIENT)) as any;
    expect(result.structuredContent.result.text).toBe("held, on credits");
    // Read again: it ran once.
    await c.client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema, PATIENT);
  } finally {
    await c.close();
  }
  // What ran is what was charged: one run, one charge of its 3 credits, no payment on the chain.
  expect(await state()).toEqual({ ...before, runs: before.runs + 1, charged: [...before.charged, ["meter/echo", -3]] });
});
