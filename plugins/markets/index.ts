import "./providers.ts";
import { Type as T } from "@sinclair/typebox";
import { HearthError, invalid, definePlugin, read, type Ctx, type About } from "hearth";
import { COINS, dayChanges, usdRates } from "./crypto.ts";
import { ecbRates, FIRST_DAY, isCurrency, type EcbRates } from "./ecb.ts";
import { chart, COMMODITIES, FUTURES, type Instrument, type Quote } from "./quotes.ts";
import { marketsCard } from "./card.ts";

const MINUTE = 60;
const HOUR = 3600;

/** One provenance for an answer drawn from several fetches: the oldest copy speaks for all. */
function combine(abouts: About[]) {
  const oldest = abouts.reduce((a, b) => (a.age_seconds >= b.age_seconds ? a : b));
  return {
    source: [...new Set(abouts.map((a) => a.source))].join(", "),
    as_of: oldest.as_of,
    age_seconds: oldest.age_seconds,
    cached: abouts.every((a) => a.cached),
    ...(abouts.some((a) => a.stale) ? { stale: true as const } : {}),
  };
}

const fmt = (n: number) => (n >= 1 ? n.toFixed(2) : n.toPrecision(4));

function ecb(ctx: Ctx, date: string | null) {
  const at = ctx.clock.now();
  const today = at.toISOString().slice(0, 10);
  // A past day's reference rates never change; today's arrive in the afternoon, Frankfurt time.
  const settled = date !== null && date < today;
  return ctx.http.get("FRANKFURTER", `/v1/${date ?? "latest"}`, {
    query: { base: "EUR" },
    ttl: settled ? Infinity : HOUR,
    parse: ecbRates,
    onFresh: async (r) =>
      await ctx.index.put({
        kind: "market",
        ref: `currencies@${r.date}`,
        owner: null,
        title: `ECB reference rates ${r.date}`,
        body: Object.entries(r.perEuro)
          .filter(([c]) => c !== "EUR")
          .map(([c, v]) => `1 EUR = ${v} ${c}`)
          .join("; "),
      }),
  });
}

function coinbase(ctx: Ctx) {
  const at = ctx.clock.now().toISOString();
  return ctx.http.get("COINBASE", "/v2/exchange-rates", {
    query: { currency: "USD" },
    ttl: MINUTE,
    revalidate: MINUTE,
    parse: usdRates,
    onFresh: async (rates) =>
      await ctx.index.put({
        kind: "market",
        ref: `crypto@${at}`,
        owner: null,
        title: `Crypto prices ${at.slice(0, 16).replace("T", " ")} UTC`,
        body: COINS.filter(([c]) => rates[c])
          .map(([c, , name]) => `${name} (${c}) ${fmt(1 / rates[c])} USD`)
          .join("; "),
      }),
  });
}

function quote(ctx: Ctx, i: Instrument) {
  const at = ctx.clock.now().toISOString();
  return ctx.http.get("YAHOO_FINANCE", `/v8/finance/chart/${encodeURIComponent(i.symbol)}`, {
    query: { range: "1d", interval: "1d" },
    ttl: 5 * MINUTE,
    accept: [404],
    parse: chart,
    onFresh: async (q: Quote) =>
      await ctx.index.put({
        kind: "market",
        ref: `${i.name}@${at}`,
        owner: null,
        title: `${i.name} ${fmt(q.price)} ${q.currency}`,
        body: `${i.description} (${i.symbol}) ${fmt(q.price)} ${q.currency}${i.unit ? ` per ${i.unit}` : ""}${q.change_pct !== null ? `, ${q.change_pct >= 0 ? "+" : ""}${q.change_pct}% on the previous close` : ""}${q.exchange ? `, ${q.exchange}` : ""}, at ${at}`,
      }),
  });
}

async function quotes(ctx: Ctx, list: Instrument[]) {
  const settled = await Promise.allSettled(list.map((i) => quote(ctx, i)));
  const ok = settled.filter((s) => s.status === "fulfilled");
  if (!ok.length) throw (settled[0] as PromiseRejectedResult).reason;
  return {
    items: list.map((i, n) => {
      const s = settled[n];
      if (s.status === "rejected")
        return {
          name: i.name,
          symbol: i.symbol,
          description: i.description,
          price: null,
          unavailable: s.reason instanceof HearthError ? s.reason.message : "no quote",
        };
      return { name: i.name, description: i.description, ...(i.unit ? { unit: `${s.value.data.currency} per ${i.unit}` } : {}), ...s.value.data };
    }),
    about: combine(ok.map((s) => s.value.about)),
  };
}

function checkCode(field: "from" | "to", raw: string): string {
  const code = raw.trim().toUpperCase();
  if (!/^[A-Z0-9]{2,10}$/.test(code)) throw invalid(field, `${field} must be a currency or asset code such as EUR or BTC (got "${raw}")`);
  return code;
}

function checkDate(date: string, today: string): string {
  const t = Date.parse(`${date}T00:00:00Z`);
  if (!Number.isFinite(t) || new Date(t).toISOString().slice(0, 10) !== date) throw invalid("date", `date is not a real day (got "${date}")`);
  if (date < FIRST_DAY) throw invalid("date", `ECB reference rates start on ${FIRST_DAY} (got ${date})`);
  if (date > today) throw invalid("date", `date must be a past day, not after ${today} (got ${date})`);
  return date;
}

export default definePlugin({
  name: "markets",
  card: marketsCard,
  description:
    "Currency conversion on European Central Bank reference rates, crypto at live prices, and live prices of crypto, stocks, commodities, futures and currencies.",
  needs: ["http", "index"],
  providers: ["COINBASE", "COINGECKO", "FRANKFURTER", "YAHOO_FINANCE"],
  config: {
    FRANKFURTER_URL: { default: "", description: "Base URL of the Frankfurter ECB-rates API (https://api.frankfurter.dev when empty)." },
    COINBASE_URL: { default: "", description: "Base URL of Coinbase's public API for crypto prices (https://api.coinbase.com when empty)." },
    COINGECKO_URL: { default: "", description: "Base URL of CoinGecko's public API for 24-hour changes (https://api.coingecko.com when empty)." },
    YAHOO_FINANCE_URL: {
      default: "",
      description: "Base URL of the Yahoo Finance chart API for stock, commodity and futures quotes (https://query1.finance.yahoo.com when empty).",
    },
    MARKETS_STOCKS: {
      default: "^GSPC,^DJI,^IXIC,^FTSE,^GDAXI,^N225,AAPL,MSFT,NVDA,GOOGL,AMZN",
      description: "Comma-separated Yahoo Finance symbols markets/list shows for stocks (indices start with ^).",
    },
  },
  methods: {
    convert: read({
      description:
        "Converts an amount between currencies on the European Central Bank's reference rates (`date` a past day back to 1999-01-04; the latest rates without it; weekends take the last working day before). Crypto (BTC, ETH, ...) converts at the live price through the US dollar and takes no `date`.",
      args: T.Object({
        amount: T.Number({ minimum: 0, default: 1, description: "How much of `from` (default 1)." }),
        from: T.String({ minLength: 1, maxLength: 12, description: "Currency or asset code, e.g. GBP or BTC." }),
        to: T.String({ minLength: 1, maxLength: 12, description: "Currency or asset code, e.g. EUR or ETH." }),
        date: T.Optional(T.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}$", description: "A past day as YYYY-MM-DD (currencies only)." })),
      }),
      access: "public",
      openWorld: true,
      async run(a, ctx) {
        const amount = a.amount ?? 1;
        const from = checkCode("from", a.from);
        const to = checkCode("to", a.to);
        const crypto = [from, to].filter((c) => !isCurrency(c));
        const date = a.date === undefined ? null : checkDate(a.date, ctx.clock.now().toISOString().slice(0, 10));
        if (crypto.length && date)
          throw invalid("date", `${crypto.join(" and ")} ${crypto.length > 1 ? "have" : "has"} no reference rate: a past date works for currencies only`);

        const abouts: About[] = [];
        let rates: EcbRates | null = null;
        const fiat = [from, to].filter(isCurrency);
        if (fiat.some((c) => c !== "USD") || (!crypto.length && fiat.length)) {
          const f = await ecb(ctx, date);
          rates = f.data;
          abouts.push(f.about);
          for (const [field, c] of [
            ["from", from],
            ["to", to],
          ] as const)
            if (isCurrency(c) && !rates.perEuro[c])
              throw invalid(
                field,
                `${c} is not among the ECB reference currencies on ${rates.date} (they are: ${Object.keys(rates.perEuro).sort().join(", ")})`,
              );
        }
        let usdPer: Record<string, number> = {};
        if (crypto.length) {
          const f = await coinbase(ctx);
          abouts.push(f.about);
          for (const [field, c] of [
            ["from", from],
            ["to", to],
          ] as const)
            if (!isCurrency(c) && !f.data[c]) throw invalid(field, `${c} is neither a currency nor an asset Coinbase prices`);
          usdPer = f.data;
        }
        // Dollars one unit is worth: crypto from its live price, currencies from the ECB's euro rates.
        const dollars = (c: string) => (isCurrency(c) ? (c === "USD" ? 1 : rates!.perEuro.USD / rates!.perEuro[c]) : 1 / usdPer[c]);
        const rate = !crypto.length ? rates!.perEuro[to] / rates!.perEuro[from] : dollars(from) / dollars(to);
        return {
          amount,
          from,
          to,
          rate: Number(rate.toPrecision(8)),
          result: Number((amount * rate).toPrecision(10)),
          basis: crypto.length ? "live price through the US dollar" : "ECB euro reference rates",
          rates_date: rates?.date ?? null,
          ...combine(abouts),
        };
      },
    }),
    list: read({
      description:
        "Live prices by `category`: crypto (default; in US dollars, with the 24-hour change where CoinGecko answers), stocks (the indices and shares in MARKETS_STOCKS), commodities (OIL, GOLD, SILVER, COPPER, COFFEE, WHEAT, CORN, SOYBEANS, OATS, priced by their front-month future), futures (metals and oil), currencies (ECB reference rates against the dollar). Each snapshot goes to the archive.",
      args: T.Object({
        category: T.Union([T.Literal("crypto"), T.Literal("stocks"), T.Literal("commodities"), T.Literal("futures"), T.Literal("currencies")], {
          default: "crypto",
          description: "crypto (default), stocks, commodities, futures or currencies.",
        }),
      }),
      access: "public",
      openWorld: true,
      async run(a, ctx) {
        const category = a.category ?? "crypto";
        if (category === "crypto") {
          const f = await coinbase(ctx);
          let changes: Record<string, number> | null = null;
          const abouts = [f.about];
          try {
            const g = await ctx.http.get("COINGECKO", "/api/v3/simple/price", {
              query: { ids: COINS.map((c) => c[1]).join(","), vs_currencies: "usd", include_24hr_change: "true" },
              ttl: 5 * MINUTE,
              parse: dayChanges,
            });
            changes = g.data;
            abouts.push(g.about);
          } catch (e) {
            // The change is a nicety: prices stand without it.
            if (!(e instanceof HearthError)) throw e;
          }
          const items = COINS.filter(([c]) => f.data[c]).map(([symbol, id, name]) => ({
            symbol,
            name,
            price_usd: Number((1 / f.data[symbol]).toPrecision(8)),
            change_24h_pct: changes && typeof changes[id] === "number" ? Math.round(changes[id] * 100) / 100 : null,
          }));
          return { category, items, ...(changes ? {} : { note: "24-hour changes are unavailable right now" }), ...combine(abouts) };
        }
        if (category === "currencies") {
          const f = await ecb(ctx, null);
          const r = f.data.perEuro;
          const items = Object.keys(r)
            .filter((c) => c !== "USD")
            .sort()
            .map((code) => ({ code, per_usd: Number((r[code] / r.USD).toPrecision(6)), in_usd: Number((r.USD / r[code]).toPrecision(6)) }));
          return { category, base: "USD", rates_date: f.data.date, items, ...f.about };
        }
        const list =
          category === "commodities"
            ? COMMODITIES
            : category === "futures"
              ? FUTURES
              : (ctx.config.MARKETS_STOCKS ?? "")
                  .split(",")
                  .map((s) => s.trim())
                  .filter(Boolean)
                  .slice(0, 30)
                  .map((symbol) => ({ name: symbol, symbol, description: symbol }));
        if (!list.length) throw invalid("category", "no stocks are configured: set MARKETS_STOCKS to Yahoo Finance symbols");
        const q = await quotes(ctx, list);
        return { category, items: q.items, ...q.about };
      },
    }),
  },
});
