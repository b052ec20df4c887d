// The home page's card: open tasks, the one in hand marked, with their due dates.
import { CARD_LINES, listIn, str, when, type CardDef } from "hearth";

export const tasksCard: CardDef = {
  title: "Open tasks",
  method: "list",
  // Open tasks come first, so the first page holds those the card shows: the home page reads a handful, not the account's history.
  args: () => ({ limit: CARD_LINES }),
  order: 20,
  view: true,
  render: (r, { zone }) => ({
    lines: listIn(r)
      .filter((t) => t.status !== "done")
      .slice(0, CARD_LINES)
      .map((t) => ({ text: str(t.title) ?? "(untitled)", detail: [t.status === "doing" ? "doing" : null, str(t.due) ? `due ${when(str(t.due), zone)}` : null].filter(Boolean).join(", ") || undefined })),
  }),
};
