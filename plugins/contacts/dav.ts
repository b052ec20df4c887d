// The account's address book over CardDAV, vCard 3.0 and 4.0. A client's card
// goes through contacts/add, so its checks hold; and since a name is unique
// per address book, a card taking a name another card holds is refused with
// 409 and CARDDAV:no-uid-conflict naming that card, rather than merged into it.
import { and, eq } from "drizzle-orm";
import { DavPrecondition, type DavCollection } from "../../core/dav/collection.ts";
import { ICAL, textOf, uidOf, vcard } from "../../core/dav/ical.ts";
import { NS } from "../../core/dav/xml.ts";
import { contacts } from "./schema.ts";

type Row = typeof contacts.$inferSelect;

/** The card's name: FN, or N's given and family names. */
function nameOf(card: InstanceType<typeof ICAL.Component>): string {
  const fn = textOf(card, "fn").trim();
  if (fn) return fn;
  const n = card.getFirstPropertyValue("n") as unknown;
  const parts = Array.isArray(n) ? n.map((p) => (Array.isArray(p) ? p.join(" ") : String(p ?? ""))) : [];
  return [parts[1], parts[0]].filter(Boolean).join(" ").trim();
}

const telOf = (card: InstanceType<typeof ICAL.Component>) => textOf(card, "tel").replace(/^tel:/i, "");

export const contactsBook: DavCollection = {
  type: "addressbook",
  displayName: "Contacts",
  list: async (ctx) => (await ctx.db.select().from(contacts).where(eq(contacts.owner, ctx.account.id)).all()).map((c) => ({ id: c.id, data: c })),
  get: async (id, ctx) => {
    const c = await ctx.db.select().from(contacts).where(and(eq(contacts.id, id), eq(contacts.owner, ctx.account.id))).get();
    return c && { id: c.id, data: c };
  },
  render(rec, o) {
    const c = rec.data as Row;
    const four = o.version === "4.0";
    const card = new ICAL.Component("vcard");
    card.addPropertyWithValue("version", four ? "4.0" : "3.0");
    card.addPropertyWithValue("prodid", "-//Hearth//contacts//EN");
    card.addPropertyWithValue("uid", o.uid);
    card.addPropertyWithValue("fn", c.name);
    const words = c.name.split(" ");
    const family = words.length > 1 ? words.pop()! : "";
    card.addPropertyWithValue("n", [family, words.join(" "), "", "", ""]);
    if (c.email) card.addPropertyWithValue("email", c.email);
    if (c.phone) {
      const tel = card.addPropertyWithValue("tel", four ? `tel:${c.phone.replace(/[^\d+]/g, "")}` : c.phone);
      if (four) tel.setParameter("value", "uri");
    }
    if (c.note) card.addPropertyWithValue("note", c.note);
    card.addPropertyWithValue("rev", ICAL.Time.fromJSDate(new Date(c.updated), true));
    return `${card.toString()}\r\n`;
  },
  async put(text, id, ctx) {
    const card = vcard(text);
    const name = nameOf(card).replace(/\s+/g, " ");
    const key = name.toLowerCase();
    // Two cards taking one name at once: the second waits, then finds the first holding it.
    if (key) await ctx.lock(`name:${ctx.account.id}:${key}`);
    const holder = key ? await ctx.db.select().from(contacts).where(and(eq(contacts.owner, ctx.account.id), eq(contacts.nameKey, key))).get() : undefined;
    if (holder && holder.id !== id)
      throw new DavPrecondition(409, { ns: NS.carddav, name: "no-uid-conflict" }, `another card in the address book is named "${holder.name}": names are unique per address book`, holder.id, "name");
    const args = { name, email: textOf(card, "email").trim(), phone: telOf(card).trim(), note: textOf(card, "note") };
    const made = (await ctx.call("contacts", "add", args)) as { id: string };
    // A renamed card is a new entry under the new name; the old one goes.
    if (id && made.id !== id) await ctx.call("contacts", "delete", { id });
    return { id: made.id, uid: uidOf(card) };
  },
  async remove(id, ctx) {
    await ctx.call("contacts", "delete", { id });
  },
};
