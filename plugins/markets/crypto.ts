// Crypto prices. Coinbase's exchange rates (keyless) give live prices in
// dollars for every asset it lists: {"data":{"currency":"USD","rates":{"BTC":"0.0000103",...}}}
// is how much of each one dollar buys. CoinGecko's simple price adds the
// 24-hour change.

export function usdRates(body: any): Record<string, number> {
  const rates = body?.data?.rates;
  if (body?.data?.currency !== "USD" || !rates || typeof rates !== "object") throw new Error("not a Coinbase exchange-rates answer");
  const out: Record<string, number> = {};
  for (const [code, v] of Object.entries(rates)) {
    const n = Number(v);
    if (Number.isFinite(n) && n > 0) out[code] = n;
  }
  return out;
}

/** What the list shows, with CoinGecko's id for each. */
export const COINS: [string, string, string][] = [
  ["BTC", "bitcoin", "Bitcoin"],
  ["ETH", "ethereum", "Ethereum"],
  ["SOL", "solana", "Solana"],
  ["XRP", "ripple", "XRP"],
  ["BNB", "binancecoin", "BNB"],
  ["ADA", "cardano", "Cardano"],
  ["DOGE", "dogecoin", "Dogecoin"],
  ["DOT", "polkadot", "Polkadot"],
  ["LINK", "chainlink", "Chainlink"],
  ["AVAX", "avalanche-2", "Avalanche"],
  ["LTC", "litecoin", "Litecoin"],
  ["UNI", "uniswap", "Uniswap"],
  ["PAXG", "pax-gold", "PAX Gold"],
];

export function dayChanges(body: any): Record<string, number> {
  if (!body || typeof body !== "object" || Array.isArray(body)) throw new Error("not a CoinGecko simple price answer");
  const out: Record<string, number> = {};
  for (const [id, v] of Object.entries(body as Record<string, any>)) if (typeof v?.usd_24h_change === "number") out[id] = v.usd_24h_change;
  return out;
}
