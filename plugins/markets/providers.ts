// The providers markets reaches, each with the policy it asks of its users.
import { defineProvider, perMinute, perSecond } from "hearth";


defineProvider({
  name: "FRANKFURTER",
  label: "Frankfurter (European Central Bank reference rates)",
  url: "https://api.frankfurter.dev",
  concurrency: 2,
  rate: perSecond(2),
});
defineProvider({ name: "COINBASE", label: "Coinbase", url: "https://api.coinbase.com", concurrency: 2, rate: perSecond(3) });
defineProvider({ name: "YAHOO_FINANCE", label: "Yahoo Finance", url: "https://query1.finance.yahoo.com", concurrency: 4, rate: perSecond(4) });
defineProvider({ name: "COINGECKO", label: "CoinGecko", url: "https://api.coingecko.com", concurrency: 1, rate: perMinute(10) });
