// Exchange quotes from Yahoo Finance's chart endpoint (keyless):
// /v8/finance/chart/<symbol> -> {"chart":{"result":[{"meta":{...}}],"error":null}},
// or 404 with {"chart":{"result":null,"error":{"code":"Not Found",...}}}.
import { notFound } from "hearth";

export interface Instrument {
  name: string;
  symbol: string;
  description: string;
  /** What one price is for, when the exchange quotes per unit of the good. */
  unit?: string;
}

// Commodities are priced by their front-month future on the exchange that sets the benchmark.
export const COMMODITIES: Instrument[] = [
  { name: "OIL", symbol: "CL=F", description: "WTI crude oil", unit: "barrel" },
  { name: "GOLD", symbol: "GC=F", description: "Gold", unit: "troy ounce" },
  { name: "SILVER", symbol: "SI=F", description: "Silver", unit: "troy ounce" },
  { name: "COPPER", symbol: "HG=F", description: "Copper", unit: "pound" },
  { name: "COFFEE", symbol: "KC=F", description: "Coffee (arabica)", unit: "pound" },
  { name: "WHEAT", symbol: "ZW=F", description: "Wheat (Chicago SRW)", unit: "bushel" },
  { name: "CORN", symbol: "ZC=F", description: "Corn", unit: "bushel" },
  { name: "SOYBEANS", symbol: "ZS=F", description: "Soybeans", unit: "bushel" },
  { name: "OATS", symbol: "ZO=F", description: "Oats", unit: "bushel" },
];

export const FUTURES: Instrument[] = [
  { name: "GOLD", symbol: "GC=F", description: "Gold futures (COMEX)", unit: "troy ounce" },
  { name: "SILVER", symbol: "SI=F", description: "Silver futures (COMEX)", unit: "troy ounce" },
  { name: "COPPER", symbol: "HG=F", description: "Copper futures (COMEX)", unit: "pound" },
  { name: "PLATINUM", symbol: "PL=F", description: "Platinum futures (NYMEX)", unit: "troy ounce" },
  { name: "PALLADIUM", symbol: "PA=F", description: "Palladium futures (NYMEX)", unit: "troy ounce" },
  { name: "OIL", symbol: "CL=F", description: "WTI crude oil futures (NYMEX)", unit: "barrel" },
  { name: "BRENT", symbol: "BZ=F", description: "Brent crude oil futures (ICE)", unit: "barrel" },
];

export interface Quote {
  symbol: string;
  title: string | null;
  price: number;
  currency: string;
  previous_close: number | null;
  change_pct: number | null;
  exchange: string | null;
  /** When the exchange last traded (RFC3339). */
  traded_at: string | null;
}

export function chart(body: any, status: number): Quote {
  if (status === 404 || (body?.chart && body.chart.result === null && body.chart.error))
    throw notFound(`no quote: ${String(body?.chart?.error?.description ?? "unknown symbol")}`);
  const meta = body?.chart?.result?.[0]?.meta;
  if (!meta || typeof meta.regularMarketPrice !== "number" || typeof meta.symbol !== "string") throw new Error("not a Yahoo Finance chart answer");
  // USX is how US exchanges quote grains and softs: cents, not dollars.
  const cents = meta.currency === "USX";
  const scale = (v: number) => (cents ? Number((v / 100).toFixed(4)) : v);
  const prev = typeof meta.previousClose === "number" ? meta.previousClose : typeof meta.chartPreviousClose === "number" ? meta.chartPreviousClose : null;
  return {
    symbol: meta.symbol,
    title: typeof meta.shortName === "string" ? meta.shortName : typeof meta.longName === "string" ? meta.longName : null,
    price: scale(meta.regularMarketPrice),
    currency: cents ? "USD" : String(meta.currency ?? ""),
    previous_close: prev === null ? null : scale(prev),
    change_pct: prev ? Math.round(((meta.regularMarketPrice - prev) / prev) * 10000) / 100 : null,
    exchange: typeof meta.fullExchangeName === "string" ? meta.fullExchangeName : typeof meta.exchangeName === "string" ? meta.exchangeName : null,
    traded_at: typeof meta.regularMarketTime === "number" ? new Date(meta.regularMarketTime * 1000).toISOString() : null,
  };
}
