import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { activity } from "../../core/db/schema.ts";
import { cliHost, coreWiring } from "../../core/instance.ts";
import { settle } from "../../core/upstream/index.ts";
import { startHearth, storeEnv, type Hearth } from "../harness.ts";
import { runs } from "./plugins/meter/index.ts";
import { mcpClient } from "../mcp/client.ts";

const PLUGINS = join(import.meta.dir, "plugins");
/** Charging accounts is something an owner who hosts others turns on; these tests do. */
const METERED = { HEARTH_METER_ACCOUNTS: "on" };

async function grant(h: Hearth, admin: string, user: string, amount: number) {
  const r = await h.call("credits/grant", { user, amount }, { token: admin });
  expect(r.status).toBe(200);
  return r.body.result;
}

async function credits(h: Hearth, token: string) {
  const r = await h.call("credits/balance", {}, { token });
  expect(r.status).toBe(200);
  return r.body.result;
}

describe("credits", () => {
  let h: Hearth;
  let admin: string;
  beforeAll(async () => {
    h = await startHearth({ env: { HEARTH_PLUGINS: PLUGINS, HEARTH_RATE_PRICED: "0", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0", ...METERED } });
    admin = await h.token("root", { admin: true });
  });
  afterAll(() => h.stop());

  test("a priced call with no credits is refused with 402 and does not run", async () => {
    const t = await h.token("poor");
    const ran = runs.echo ?? 0;
    const r = await h.call("meter/echo", { text: "hi" }, { token: t });
    expect(r.status).toBe(402);
    expect(r.body.error.kind).toBe("payment_required");
    expect(r.body.error.message).toContain("3 credits");
    expect((await credits(h, t)).balance).toBe(0);
    expect(runs.echo ?? 0).toBe(ran);
  });

  test("an admin grant is an entry, and a call charges exactly its price", async () => {
    const t = await h.token("alice");
    const g = await grant(h, admin, "alice", 10);
    expect(g.balance).toBe(10);
    const r = await h.call("meter/echo", { text: "hi" }, { token: t });
    expect(r.status).toBe(200);
    expect(r.body.result.text).toBe("hi");
    const c = await credits(h, t);
    expect(c.balance).toBe(7);
    expect(c.entries.map((e: { delta: number; reason: string; method: string | null }) => [e.delta, e.reason, e.method])).toEqual([
      [-3, "charge", "meter/echo"],
      [10, "grant", null],
    ]);
    expect(c.entries[0].request_id).toBe(r.headers.get("x-request-id"));
  });

  test("a call that fails is not charged", async () => {
    const t = await h.token("bob");
    await grant(h, admin, "bob", 5);
    const r = await h.call("meter/fail", {}, { token: t });
    expect(r.status).toBe(500);
    expect((await credits(h, t)).balance).toBe(5);
  });

  test("a write and its charge commit together", async () => {
    const t = await h.token("carol");
    await grant(h, admin, "carol", 2);
    expect((await h.call("meter/record", { text: "first" }, { token: t })).status).toBe(200);
    const r = await h.call("meter/record", { text: "second" }, { token: t });
    expect(r.status).toBe(402);
    const lines = (await h.rt.store.rdb.select().from(activity).all()).filter((a) => a.type === "meter.recorded").map((a) => a.text);
    expect(lines).toEqual(["first"]);
    expect((await credits(h, t)).balance).toBe(0);
  });

  test("a price that depends on the arguments is charged as computed", async () => {
    const t = await h.token("dave");
    await grant(h, admin, "dave", 10);
    expect((await h.call("meter/segments", { text: "x".repeat(161) }, { token: t })).status).toBe(200);
    expect((await credits(h, t)).balance).toBe(8);
  });

  test("an answer served from cache is not charged", async () => {
    let hits = 0;
    const provider = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => (hits++, Response.json({ n: 42 })) });
    const c = await startHearth({ env: { HEARTH_PLUGINS: PLUGINS, HEARTH_RATE_PRICED: "0", METER_TEST_URL: `http://127.0.0.1:${provider.port}`, ...METERED } });
    try {
      const root = await c.token("root", { admin: true });
      const t = await c.token("ivy");
      await grant(c, root, "ivy", 10);
      const first = await c.call("meter/lookup", { key: "a" }, { token: t });
      expect(first.status).toBe(200);
      expect(first.body.result.cached).toBe(false);
      await settle(c.rt);
      const second = await c.call("meter/lookup", { key: "a" }, { token: t });
      expect(second.body.result).toEqual({ value: { n: 42 }, cached: true });
      expect(hits).toBe(1);
      const after = await credits(c, t);
      expect(after.balance).toBe(8);
      expect(after.entries.filter((e: { reason: string }) => e.reason === "charge").length).toBe(1);
    } finally {
      await c.stop();
      provider.stop(true);
    }
  });

  test("50 parallel charges with credits for 20 succeed exactly 20 times", async () => {
    const t = await h.token("erin");
    await grant(h, admin, "erin", 60);
    const ran = runs.echo ?? 0;
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => h.call("meter/echo", { text: `n${i}` }, { token: t })));
    const statuses = results.map((r) => r.status);
    // Credits are held while a call runs, so the refused 30 never reached the handler.
    expect((runs.echo ?? 0) - ran).toBe(20);
    expect(statuses.filter((s) => s === 200).length).toBe(20);
    expect(statuses.filter((s) => s === 402).length).toBe(30);
    const c = await credits(h, t);
    expect(c.balance).toBe(0);
  });

  test("the ledger refuses to be changed in place", async () => {
    const before = await h.rows("SELECT * FROM pay_ledger ORDER BY id");
    expect(before.length).toBeGreaterThan(0);
    // The store's own error, under drizzle's "Failed query" where it wraps it.
    const refusal = (q: string) => h.exec(q).then(() => "", (e: Error) => `${e.message} ${(e.cause as Error | undefined)?.message ?? ""}`);
    expect(await refusal("UPDATE pay_ledger SET delta = 1000")).toContain("pay_ledger is append-only");
    expect(await refusal("DELETE FROM pay_ledger")).toContain("pay_ledger is append-only");
    expect(await h.rows("SELECT * FROM pay_ledger ORDER BY id")).toEqual(before);
  });

  test("only an admin may grant; grants name the field they refuse", async () => {
    const t = await h.token("frank");
    expect((await h.call("credits/grant", { user: "frank", amount: 5 }, { token: t })).status).toBe(403);
    const bad = await h.call("credits/grant", { user: "frank", amount: 0 }, { token: admin });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe("amount");
    expect((await h.call("credits/grant", { user: "nobody", amount: 5 }, { token: admin })).status).toBe(404);
  });

  test("a stranger on a priced method gets 402 stating the price and how to pay when the instance takes no x402", async () => {
    const ran = runs.echo ?? 0;
    const r = await h.call("meter/echo", { text: "hi" });
    expect(r.status).toBe(402);
    expect(r.body.error).toMatchObject({ kind: "payment_required", price: { credits: 3, usd: 0.03 } });
    expect(r.body.error.message).toContain("3 credits ($0.03)");
    expect(r.body.error.message).toContain("an account with credits");
    // No x402 terms it could not honour.
    expect(r.body.accepts).toBeUndefined();
    expect(r.body.error.accepts).toBeUndefined();
    expect(r.headers.get("payment-required")).toBeNull();
    // A payment sent anyway is refused the same way, not taken for a login.
    const paid = await h.call("meter/echo", { text: "hi" }, { headers: { "X-PAYMENT": btoa(JSON.stringify({ x402Version: 1, scheme: "exact", network: "base", payload: {} })) } });
    expect(paid.status).toBe(402);
    expect(paid.body.error.price).toEqual({ credits: 3, usd: 0.03 });
    expect(runs.echo ?? 0).toBe(ran);
    expect((await h.call("meter/free", {})).status).toBe(200);
  });

  test("GET /api/v1/prices lists every method from the registry", async () => {
    const res = await fetch(`${h.url}/api/v1/prices`);
    expect(res.status).toBe(200);
    const { result } = (await res.json()) as { result: { metered: boolean; methods: { method: string; credits: number | null }[] } };
    expect(result.metered).toBe(true);
    const by = new Map(result.methods.map((m) => [m.method, m.credits]));
    expect(by.size).toBe(h.rt.registry.methods.size);
    expect(by.get("meter/echo")).toBe(3);
    expect(by.get("meter/segments")).toBeNull();
    expect(by.get("notes/add")).toBe(0);
  });
});

describe("price overrides and metering off", () => {
  test("config overrides replace a declared price everywhere", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-prices-"));
    const file = join(dir, "prices.json");
    writeFileSync(file, JSON.stringify({ "meter/echo": 1, "meter/free": 4, "elsewhere/thing": 9 }));
    const h = await startHearth({ env: { HEARTH_PLUGINS: PLUGINS, HEARTH_PRICES: file, HEARTH_RATE_PRICED: "0", ...METERED } });
    try {
      const admin = await h.token("root", { admin: true });
      const t = await h.token("gina");
      await grant(h, admin, "gina", 5);
      expect((await h.call("meter/echo", { text: "a" }, { token: t })).status).toBe(200);
      expect((await h.call("meter/free", {}, { token: t })).status).toBe(200);
      expect((await credits(h, t)).balance).toBe(0);
      const list = (await (await fetch(`${h.url}/api/v1/prices`)).json()) as { result: { methods: { method: string; credits: number }[] } };
      expect(list.result.methods.find((m) => m.method === "meter/free")!.credits).toBe(4);
    } finally {
      await h.stop();
    }
  });

  test("a priced write whose answer is its last statement (notes/add) is charged once for each note written, over HTTP and MCP; one refused writes nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-prices-"));
    const file = join(dir, "prices.json");
    writeFileSync(file, JSON.stringify({ "notes/add": 2 }));
    const h = await startHearth({ env: { HEARTH_PLUGINS: PLUGINS, HEARTH_PRICES: file, HEARTH_RATE_PRICED: "0", HEARTH_RATE_WRITES: "0", ...METERED } });
    try {
      const admin = await h.token("root", { admin: true });
      const t = await h.token("nora");
      await grant(h, admin, "nora", 5);
      const overHttp = await h.call("notes/add", { title: "first", text: "over HTTP" }, { token: t });
      expect(overHttp.status).toBe(200);
      expect(overHttp.body.result).toMatchObject({ title: "first", text: "over HTTP" });
      const mcp = await mcpClient(h.url, { token: t });
      try {
        const overMcp = await mcp.call("notes_add", { title: "second", text: "over MCP" });
        expect(overMcp.isError).toBeFalsy();
        expect(overMcp.structuredContent).toMatchObject({ result: { title: "second", text: "over MCP" } });
      } finally {
        await mcp.close();
      }
      // 5 credits, 2 a note: a third is refused before it runs.
      expect((await h.call("notes/add", { title: "third", text: "unpaid" }, { token: t })).status).toBe(402);
      expect((await credits(h, t)).balance).toBe(1);
      const listed = await h.call("notes/list", {}, { token: t });
      expect(listed.body.result.map((n: { title: string; text: string }) => [n.title, n.text])).toEqual([
        ["first", "over HTTP"],
        ["second", "over MCP"],
      ]);
    } finally {
      await h.stop();
    }
  });

  test("a bad override file stops the start naming the key", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-prices-"));
    const file = join(dir, "prices.json");
    writeFileSync(file, JSON.stringify({ "meter/echo": -1 }));
    await expect(startHearth({ env: { HEARTH_PLUGINS: PLUGINS, HEARTH_PRICES: file } })).rejects.toThrow(/meter\/echo/);
  });

  test("HEARTH_METERING=off makes everything free", async () => {
    const h = await startHearth({ env: { HEARTH_PLUGINS: PLUGINS, HEARTH_METERING: "off" } });
    try {
      const r = await h.call("meter/echo", { text: "free" });
      expect(r.status).toBe(200);
      const list = (await (await fetch(`${h.url}/api/v1/prices`)).json()) as { result: { metered: boolean; methods: { method: string; credits: number }[] } };
      expect(list.result.metered).toBe(false);
      expect(list.result.methods.every((m) => m.credits === 0)).toBe(true);
    } finally {
      await h.stop();
    }
  });
});

describe("hearth credits", () => {
  test("grant and balance from the command line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-cli-"));
    const h = await startHearth({ dataDir: dir });
    await h.token("hank");
    await h.stop();
    const env: Record<string, string> = { HEARTH_DATA: dir, ...(await storeEnv(dir)) };
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    const writes: string[] = [];
    const orig = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((s: string) => (writes.push(String(s)), true)) as typeof process.stdout.write;
    try {
      expect(await coreWiring.cli.get("credits")!.run(["grant", "--user", "hank", "--amount", "25", "--note", "welcome"], cliHost)).toBe(0);
      expect(await coreWiring.cli.get("credits")!.run(["balance", "--user", "hank"], cliHost)).toBe(0);
      expect(await coreWiring.cli.get("credits")!.run(["grant", "--user", "hank"], cliHost)).toBe(2);
    } finally {
      process.stdout.write = orig;
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    expect(JSON.parse(writes[0]).balance).toBe(25);
    expect(JSON.parse(writes[1]).balance).toBe(25);
    expect(JSON.parse(writes[1]).recent[0].note).toContain("welcome");
  });
});
