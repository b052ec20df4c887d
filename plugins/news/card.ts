// The home page's card: the latest headlines, each linking to its article.
import { CARD_LINES, listIn, str, type CardDef } from "hearth";

export const newsCard: CardDef = {
  title: "Headlines",
  method: "list",
  order: 60,
  args: () => ({ limit: CARD_LINES }),
  render: (r) => ({
    lines: listIn(r)
      .slice(0, CARD_LINES)
      .map((n) => ({ text: str(n.title) ?? str(n.headline) ?? "", detail: str(n.source) ?? str(n.feed) ?? undefined, href: str(n.url) ?? str(n.link) ?? undefined }))
      .filter((l) => l.text),
  }),
};
