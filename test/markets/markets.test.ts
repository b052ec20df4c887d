import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { settle } from "../../core/upstream/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { json, recorded, startFixture } from "../upstream/fixture-server.ts";

let geckoDown = false;
const fixture = startFixture({
  "/v1/latest": () => json(recorded("frankfurter", "latest.json")),
  "/v1/2001-03-15": () => json(recorded("frankfurter", "2001-03-15.json")),
  "/v2/exchange-rates": () => json(recorded("coinbase", "exchange-rates-usd.json")),
  "/api/v3/simple/price": () =>
    geckoDown
      ? json('{"status":{"error_code":429,"error_message":"You\'ve exceeded the Rate Limit."}}', 429)
      : json(recorded("coingecko", "simple-price.json")),
  "/v8/finance/chart/*": (_q, req) => {
    const symbol = decodeURIComponent(new URL(req.url).pathname.split("/").pop()!);
    const file = `chart-${symbol.replace("^", "_").replace("=", "_")}.json`;
    if (!existsSync(join(import.meta.dir, "..", "fixtures", "yahoo-finance", file))) return json(recorded("yahoo-finance", "chart-not-found.json"), 404);
    return json(recorded("yahoo-finance", file));
  },
});

const clock = new TestClock(new Date("2026-11-21T10:00:00Z").getTime());
let h: Hearth;
beforeAll(async () => {
  h = await startHearth({
    clock,
    env: {
      FRANKFURTER_URL: fixture.url,
      COINBASE_URL: fixture.url,
      COINGECKO_URL: fixture.url,
      YAHOO_FINANCE_URL: fixture.url,
      MARKETS_STOCKS: "^GSPC, AAPL, NOPE",
      UPSTREAM_TIMEOUT_MS: "5000",
      UPSTREAM_RETRY_MS: "1",
    },
  });
});
afterAll(async () => {
  await settle(h.rt);
  await h.stop();
  fixture.stop();
});

const archived = async (like: string) => {
  await settle(h.rt);
  return h.rows<{ ref: string; title: string; body: string; owner: string | null }>("SELECT ref, title, body, owner FROM search_index WHERE kind = 'market' AND ref LIKE ?", like);
};

describe("convert", () => {
  test("between currencies on the ECB's latest reference rates", async () => {
    const r = await h.call("markets/convert", { amount: 100, from: "gbp", to: "EUR" });
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({
      amount: 100,
      from: "GBP",
      to: "EUR",
      rate: 1.1478421,
      result: 114.7842057,
      basis: "ECB euro reference rates",
      rates_date: "2026-11-20",
      cached: false,
    });
    expect(r.body.result.source).toContain("Frankfurter");
    expect(fixture.last("/v1/latest")!.query.get("base")).toBe("EUR");
    const yen = await h.call("markets/convert", { from: "USD", to: "JPY" });
    expect(yen.body.result).toMatchObject({ amount: 1, rate: 152.79986, cached: true });
    expect(fixture.hits("/v1/latest")).toBe(1);
  });

  test("each ECB snapshot goes to the archive as a public market entry", async () => {
    const rows = await archived("currencies@%");
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ref: "currencies@2026-11-20", title: "ECB reference rates 2026-11-20", owner: null });
    expect(rows[0].body).toContain("1 EUR = 1.1572 USD");
  });

  test("a past day back to 1999, kept for good", async () => {
    const r = await h.call("markets/convert", { amount: 10, from: "GBP", to: "USD", date: "2001-03-15" });
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({ rate: 1.436723, result: 14.36722984, rates_date: "2001-03-15" });
    clock.advance(365 * 86_400_000);
    const again = await h.call("markets/convert", { from: "CYP", to: "EUR", date: "2001-03-15" });
    expect(again.body.result.cached).toBe(true);
    expect(fixture.hits("/v1/2001-03-15")).toBe(1);
    clock.set("2026-11-21T10:00:00Z");
  });

  test("crypto at the live price through the dollar", async () => {
    const ecbBefore = fixture.hits("/v1/latest");
    const usd = await h.call("markets/convert", { amount: 2, from: "BTC", to: "USD" });
    expect(usd.status).toBe(200);
    expect(usd.body.result).toMatchObject({ rate: 97000, result: 194000, basis: "live price through the US dollar", rates_date: null, source: "Coinbase" });
    expect(fixture.hits("/v1/latest")).toBe(ecbBefore);
    const eur = await h.call("markets/convert", { from: "BTC", to: "EUR" });
    expect(eur.body.result.rate).toBeCloseTo(97000 / 1.1572, 2);
    expect(eur.body.result.source).toBe("Frankfurter (European Central Bank reference rates), Coinbase");
    const eth = await h.call("markets/convert", { from: "ETH", to: "btc" });
    expect(eth.body.result.rate).toBeCloseTo(3300 / 97000, 8);
  });

  test("argument rules", async () => {
    for (const [args, field, words] of [
      [{ from: "BTC", to: "USD", date: "2024-01-02" }, "date", "currencies only"],
      [{ from: "GBP", to: "USD", date: "1998-12-31" }, "date", "1999-01-04"],
      [{ from: "GBP", to: "USD", date: "2026-11-22" }, "date", "past day"],
      [{ from: "GBP", to: "USD", date: "2021-02-29" }, "date", "real day"],
      [{ from: "GBP", to: "USD", date: "2021/01/01" }, "date", ""],
      [{ from: "AED", to: "USD" }, "from", "not among the ECB reference currencies"],
      [{ from: "USD", to: "ZZZCOIN" }, "to", "neither a currency nor an asset"],
      [{ from: "GBP", to: "e$" }, "to", ""],
      [{ from: "GBP", to: "USD", amount: -5 }, "amount", ""],
      [{ to: "USD" }, "from", ""],
    ] as const) {
      const r = await h.call("markets/convert", args);
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe(field);
      expect(r.body.error.message).toContain(words);
    }
  });
});

describe("list", () => {
  test("crypto by default, prices in dollars; without CoinGecko the change is left out and said to be", async () => {
    geckoDown = true;
    const r = await h.call("markets/list");
    geckoDown = false;
    expect(r.status).toBe(200);
    expect(r.body.result.category).toBe("crypto");
    expect(r.body.result.items[0]).toEqual({ symbol: "BTC", name: "Bitcoin", price_usd: 97000, change_24h_pct: null });
    expect(r.body.result.note).toContain("unavailable");
    const again = await h.call("markets/list", { category: "crypto" });
    expect(again.body.result.items.map((i: any) => [i.symbol, i.change_24h_pct]).slice(0, 3)).toEqual([
      ["BTC", 1.87],
      ["ETH", -0.55],
      ["SOL", 3.2],
    ]);
    expect(again.body.result.items).toHaveLength(13);
    expect(again.body.result.source).toBe("Coinbase, CoinGecko");
    expect(fixture.last("/api/v3/simple/price")!.query.get("ids")).toContain("avalanche-2");
    const rows = await archived("crypto@%");
    expect(rows.length).toBeGreaterThanOrEqual(1);
    expect(rows[0].body).toContain("Bitcoin (BTC) 97000.00 USD");
  });

  test("commodities are exactly the nine, grains and coffee turned from cents to dollars", async () => {
    const r = await h.call("markets/list", { category: "commodities" });
    expect(r.status).toBe(200);
    const items = r.body.result.items;
    expect(items.map((i: any) => i.name)).toEqual(["OIL", "GOLD", "SILVER", "COPPER", "COFFEE", "WHEAT", "CORN", "SOYBEANS", "OATS"]);
    expect(items[1]).toMatchObject({
      symbol: "GC=F",
      price: 2712.4,
      currency: "USD",
      unit: "USD per troy ounce",
      change_pct: 0.68,
      exchange: "COMEX",
      traded_at: "2026-11-21T09:50:00.000Z",
    });
    expect(items[4]).toMatchObject({ name: "COFFEE", price: 2.8835, currency: "USD", unit: "USD per pound" });
    expect(items[5]).toMatchObject({ name: "WHEAT", price: 5.6125, previous_close: 5.565 });
    expect(r.body.result.source).toBe("Yahoo Finance");
    const gold = await archived("GOLD@%");
    expect(gold[0].title).toBe("GOLD 2712.40 USD");
  });

  test("futures cover the metals and oil", async () => {
    const r = await h.call("markets/list", { category: "futures" });
    expect(r.body.result.items.map((i: any) => i.name)).toEqual(["GOLD", "SILVER", "COPPER", "PLATINUM", "PALLADIUM", "OIL", "BRENT"]);
    expect(r.body.result.items[4]).toMatchObject({ symbol: "PA=F", price: 1021.5, change_pct: -1.11 });
    // Shared symbols come from the copy the commodities list fetched.
    expect(fixture.hits("/v8/finance/chart/GC%3DF")).toBe(1);
  });

  test("stocks are the configured symbols; one that fails is marked, the rest stand", async () => {
    const r = await h.call("markets/list", { category: "stocks" });
    expect(r.status).toBe(200);
    expect(r.body.result.items.map((i: any) => [i.symbol, i.price])).toEqual([
      ["^GSPC", 6123.45],
      ["AAPL", 241.82],
      ["NOPE", null],
    ]);
    expect(r.body.result.items[0].title).toBe("S&P 500");
    expect(r.body.result.items[2].unavailable).toContain("No data found");
  });

  test("currencies against the dollar on the ECB's rates", async () => {
    const r = await h.call("markets/list", { category: "currencies" });
    expect(r.body.result).toMatchObject({ base: "USD", rates_date: "2026-11-20" });
    const eur = r.body.result.items.find((i: any) => i.code === "EUR");
    const gbp = r.body.result.items.find((i: any) => i.code === "GBP");
    expect(eur).toEqual({ code: "EUR", per_usd: 0.864155, in_usd: 1.1572 });
    expect(gbp.per_usd).toBe(0.752852);
    expect(r.body.result.items.find((i: any) => i.code === "USD")).toBeUndefined();
  });

  test("an unknown category is refused", async () => {
    const r = await h.call("markets/list", { category: "bonds" });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("category");
  });
});

describe("when a provider fails", () => {
  test("500 is a 502, garbage a 502, silence a 504, and a held copy answers stale", async () => {
    clock.advance(3600_000);
    fixture.fail = "500";
    expect((await h.call("markets/convert", { from: "GBP", to: "USD", date: "2020-01-06" })).status).toBe(502);
    // Every quote was fetched an hour ago: the list answers from those copies, marked stale.
    const futures = await h.call("markets/list", { category: "futures" });
    expect(futures.status).toBe(200);
    expect(futures.body.result.stale).toBe(true);
    fixture.fail = "garbage";
    expect((await h.call("markets/convert", { from: "GBP", to: "USD", date: "2020-01-02" })).status).toBe(502);
    fixture.fail = "hang";
    expect((await h.call("markets/convert", { from: "GBP", to: "USD", date: "2020-01-03" })).status).toBe(504);
    fixture.fail = "500";
    const r = await h.call("markets/convert", { from: "BTC", to: "USD" });
    fixture.fail = null;
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({ rate: 97000, stale: true, cached: true });
  });
});
