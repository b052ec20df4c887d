// The home page's card: a few prices in dollars with their change over a day.
import { CARD_LINES, listIn, num, str, type CardDef } from "hearth";

export const marketsCard: CardDef = {
  title: "Markets",
  method: "list",
  order: 70,
  render: (r) => ({
    lines: listIn(r)
      .slice(0, CARD_LINES)
      .map((m) => {
        const price = num(m.price_usd) ?? num(m.price);
        const change = num(m.change_24h_pct) ?? num(m.change_pct);
        return {
          text: `${str(m.name) ?? str(m.symbol) ?? ""}${str(m.symbol) && str(m.name) ? ` (${m.symbol})` : ""}`,
          detail: [price !== null ? `$${price.toLocaleString("en-US", { maximumFractionDigits: price < 10 ? 4 : 2 })}` : null, change !== null ? `${change >= 0 ? "+" : ""}${change}%` : null]
            .filter(Boolean)
            .join(" "),
        };
      })
      .filter((l) => l.text),
  }),
};
