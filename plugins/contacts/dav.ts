// The account's address book over CardDAV, vCard 3.0 and 4.0. A client's card
// goes through contacts/add, so its checks hold; and since a name is unique
// per address book, a card taking a name another card holds is refused with
// 409 and CARDDAV:no-uid-conflict naming that card, rather than merged into it.
// The card a client sent stays the record: a contact keeps its name, its
// primary email and phone and its note, and a change to those over the API
// rewrites just those lines of the card, keeping every other email, phone,
// photo and property, in the vCard version the client wrote.
import { and, eq } from "drizzle-orm";
import { DavPrecondition, type DavCollection, ICAL, textOf, uidOf, vcard } from "hearth";
import { ContentPatch, escapeText, utcStamp, NS } from "hearth/dav";
import { listOf } from "./lists.ts";
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

type Card = InstanceType<typeof ICAL.Component>;

/**
 * Which of a card's emails or phones is the contact's own: the one marked
 * preferred (PREF=1 in 4.0, TYPE=pref in 3.0), else the first.
 */
function primaryOf(card: Card, prop: "email" | "tel"): number {
  const all = card.getAllProperties(prop);
  let best = 0;
  let rank = Infinity;
  all.forEach((p, i) => {
    const types = ([] as unknown[]).concat(p.getParameter("type") ?? []).map((t) => String(t).toLowerCase());
    const pref = Number(p.getParameter("pref") ?? (types.includes("pref") ? 1 : Infinity));
    if (pref < rank) [best, rank] = [i, pref];
  });
  return best;
}

const valueOf = (card: Card, prop: "email" | "tel") => {
  const p = card.getAllProperties(prop)[primaryOf(card, prop)];
  const v = p?.getFirstValue();
  return v === null || v === undefined ? "" : String(v);
};

/** Parameters that say how a line is used rather than what kind it is: kept as the client wrote them when its kind changes. */
const NOT_KINDS = new Set(["pref", "internet", "voice", "x400"]);

/** The kind a line's TYPE says ("home", "work", "cell"…), lowercased; "" for none. */
function kindOf(p: InstanceType<typeof ICAL.Property>): string {
  const types = ([] as unknown[]).concat(p.getParameter("type") ?? []).flatMap((t) => String(t).split(",")).map((t) => t.trim().toLowerCase());
  return types.find((t) => t && !NOT_KINDS.has(t)) ?? "";
}

/** The card's lines of `prop` in the contact's order: the primary first, then the rest as the card has them. */
function ordered(card: Card, prop: "email" | "tel"): number[] {
  const first = primaryOf(card, prop);
  const all = card.getAllProperties(prop).map((_p, i) => i);
  return all.length ? [first, ...all.filter((i) => i !== first)] : [];
}

/** A line's head with its kind changed: the other TYPE values (PREF, INTERNET, VOICE) and parameters as written. */
function withKind(head: string, kind: string): string {
  const m = /;TYPE=("[^"]*"|[^;:]*)/i.exec(head);
  if (!m) return kind ? `${head};TYPE=${kind}` : head;
  const quoted = m[1].startsWith('"');
  const kept = m[1].replace(/"/g, "").split(",").filter((t) => NOT_KINDS.has(t.trim().toLowerCase()));
  const all = [...(kind ? [kind] : []), ...kept].join(",");
  const rest = head.slice(m.index + m[0].length);
  return all ? `${head.slice(0, m.index)};TYPE=${quoted ? `"${all}"` : all}${rest}` : head.slice(0, m.index) + rest;
}

/** A phone as a tel: URI's number (RFC 3966): digits and + with - for the spaces between. */
const uriPhone = (phone: string) => phone.trim().replace(/\s+/g, "-");

/** What the contact keeps of a card. */
function fieldsOf(card: Card) {
  return { name: nameOf(card).replace(/\s+/g, " ").trim(), email: valueOf(card, "email").trim(), phone: valueOf(card, "tel").replace(/^tel:/i, "").trim(), note: textOf(card, "note") };
}

/** The client's card with the contact's name, primary email and phone and note brought up to the record; every other line as sent. */
function patchCard(raw: string, c: Row): string {
  const card = vcard(raw);
  const was = fieldsOf(card);
  const p = new ContentPatch(raw, "VCARD");
  let changed = false;
  if (was.name !== c.name) {
    changed = true;
    p.setValue("FN", escapeText(c.name));
    const n = p.values("N")[0];
    if (n !== undefined) {
      // N's family and given names follow the new name; its other parts (prefixes, suffixes) stay.
      const parts = n.split(/(?<!\\);/);
      const words = c.name.split(" ");
      const family = words.length > 1 ? words.pop()! : "";
      while (parts.length < 5) parts.push("");
      parts[0] = escapeText(family);
      parts[1] = escapeText(words.join(" "));
      p.setValue("N", parts.join(";"));
    }
  }
  const four = card.getFirstPropertyValue("version") === "4.0";
  if (syncList(p, card, "email", [c.email, ...listOf(c.otherEmails)], c.emailTypes ? listOf(c.emailTypes) : null, () => false)) changed = true;
  if (syncList(p, card, "tel", [c.phone, ...listOf(c.otherPhones)], c.phoneTypes ? listOf(c.phoneTypes) : null, (head) => /(^|;)VALUE=uri(;|$)/i.test(head ?? "") || (head === undefined && four))) changed = true;
  if (was.note !== c.note) {
    changed = true;
    if (!c.note) p.remove("NOTE");
    else p.setValue("NOTE", escapeText(c.note));
  }
  if (changed && p.has("REV")) p.setLine("REV", `REV:${utcStamp(c.updated)}`);
  return p.toString();
}

/**
 * Brings the card's emails or phones up to the contact's (the primary first):
 * a line whose value and kind are the record's is left as written; one that
 * differs gets the new value or kind in its own head; lines the contact no
 * longer has go, and new ones are added after the rest. True when any changed.
 */
function syncList(p: ContentPatch, card: Card, prop: "email" | "tel", want: string[], kinds: string[] | null, isUri: (head: string | undefined) => boolean): boolean {
  const NAME = prop.toUpperCase();
  const props = card.getAllProperties(prop);
  const order = ordered(card, prop);
  // The record's primary may be blank while others remain (a card never says so): its line goes.
  const record = want.map((v, i) => ({ value: v.trim(), kind: kinds?.[i] ?? null })).filter((e, i) => i > 0 ? e.value : true);
  let changed = false;
  const gone: number[] = [];
  order.forEach((line, k) => {
    const e = record[k];
    if (!e || !e.value) return void gone.push(line);
    const head = p.head(NAME, line)!;
    const uri = prop === "tel" && isUri(head);
    const has = String(props[line].getFirstValue() ?? "").replace(/^tel:/i, "").trim();
    const value = uri ? uriPhone(e.value) : e.value;
    const kind = e.kind !== null && e.kind !== kindOf(props[line]) ? withKind(head, e.kind) : head;
    if (has === value && kind === head) return;
    changed = true;
    p.replaceLine(NAME, `${kind}:${uri ? `tel:${value}` : escapeText(value)}`, line);
  });
  for (const line of gone.sort((a, b) => b - a)) p.remove(NAME, line);
  for (const e of record.slice(order.length)) {
    if (!e.value) continue;
    changed = true;
    const uri = prop === "tel" && isUri(undefined);
    const kind = e.kind ? `;TYPE=${e.kind}` : "";
    p.add(uri ? `TEL;VALUE=uri${kind}:tel:${uriPhone(e.value)}` : `${NAME}${kind}:${escapeText(e.value)}`);
  }
  return changed || gone.length > 0;
}

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
    if (o.raw) return patchCard(o.raw, c);
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
    const { name, email, phone, note } = fieldsOf(card);
    const key = name.toLowerCase();
    // Two cards taking one name at once: the second waits, then finds the first holding it.
    if (key) await ctx.lock(`name:${ctx.account.id}:${key}`);
    const holder = key ? await ctx.db.select().from(contacts).where(and(eq(contacts.owner, ctx.account.id), eq(contacts.nameKey, key))).get() : undefined;
    if (holder && holder.id !== id)
      throw new DavPrecondition(409, { ns: NS.carddav, name: "no-uid-conflict" }, `another card in the address book is named "${holder.name}": names are unique per address book`, holder.id, "name");
    // A renamed card stays the same contact: its name moves first, so contacts/add (which finds a
    // contact by name) changes it rather than making another. Should contacts/add refuse the card,
    // the request's write is undone, the rename with it.
    if (id && key && !holder) await ctx.db.update(contacts).set({ name, nameKey: key }).where(and(eq(contacts.id, id), eq(contacts.owner, ctx.account.id))).run();
    const made = (await ctx.call("contacts", "add", { name, email, phone, note })) as { id: string };
    // The card's other emails and phones, for the API's answers; the card itself keeps them all.
    const others = (prop: "email" | "tel") =>
      JSON.stringify(
        card
          .getAllProperties(prop)
          .filter((_p, i) => i !== primaryOf(card, prop))
          .map((p) => String(p.getFirstValue() ?? "").replace(/^tel:/i, "").trim())
          .filter(Boolean),
      );
    // And what kind each is, the primary first, so the screens can show and change them.
    const kinds = (prop: "email" | "tel") => {
      const props = card.getAllProperties(prop);
      const list = ordered(card, prop).map((i) => kindOf(props[i]));
      return list.some(Boolean) ? JSON.stringify(list) : "";
    };
    await ctx.db
      .update(contacts)
      .set({ otherEmails: others("email"), otherPhones: others("tel"), emailTypes: kinds("email"), phoneTypes: kinds("tel") })
      .where(eq(contacts.id, made.id))
      .run();
    return { id: made.id, uid: uidOf(card) };
  },
  async remove(id, ctx) {
    await ctx.call("contacts", "delete", { id });
  },
};
