// The home page's card: the next few events, at the person's local time.
import { CARD_LINES, listIn, str, when, type CardDef } from "hearth";

export const eventsCard: CardDef = {
  title: "Next events",
  method: "list",
  order: 10,
  view: true,
  render: (r, { zone }) => ({ lines: listIn(r).slice(0, CARD_LINES).map((e) => ({ text: str(e.title) ?? "(untitled)", detail: when(str(e.next) ?? str(e.when), zone) })) }),
};
