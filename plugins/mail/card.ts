// The home page's card: unread mail, or the latest when the inbox does not say what is read.
import { CARD_LINES, listIn, obj, str, when, type CardDef } from "hearth";

export const mailCard: CardDef = {
  title: "Unread mail",
  method: "inbox",
  order: 30,
  args: () => ({ limit: 20 }),
  render: (r, { zone }) => {
    const all = listIn(r);
    const marked = all.some((m) => typeof m.read === "boolean" || typeof m.unread === "boolean" || typeof m.seen === "boolean");
    const unread = marked ? all.filter((m) => m.read === false || m.unread === true || m.seen === false) : all;
    return {
      title: marked ? "Unread mail" : "Latest mail",
      lines: unread.slice(0, CARD_LINES).map((m) => ({
        text: str(m.subject) ?? "(no subject)",
        detail: [str(m.from) ?? str(obj(m.from)?.address) ?? str(m.sender), when(str(m.date) ?? str(m.received) ?? str(m.at), zone)].filter(Boolean).join(", ") || undefined,
      })),
    };
  },
};
