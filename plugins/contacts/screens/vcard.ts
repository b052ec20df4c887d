// vCards in and out of the address book, in the browser: a file of cards read
// into what contacts/add takes, and the whole book written as one .vcf.

export interface Contact {
  id: string;
  name: string;
  email: string | null;
  phone: string | null;
  emails?: string[];
  phones?: string[];
  /** What kind each of `emails` (and `phones`) is, when known: "home", "work"…, "" for none. */
  email_types?: string[];
  phone_types?: string[];
  note: string | null;
  created: string;
  updated: string;
}

export interface Card {
  name: string;
  emails: string[];
  phones: string[];
  note: string;
}

const unescape = (v: string) => v.replace(/\\([\\;,nN])/g, (_m, c: string) => (c === "n" || c === "N" ? "\n" : c));
const escape = (v: string) => v.replace(/[\\;,]/g, (c) => `\\${c}`).replace(/\r?\n/g, "\\n");

/** Every card in a .vcf file (folded lines joined; groups and parameters set aside). */
export function parseCards(text: string): Card[] {
  const lines = text.replace(/\r?\n[ \t]/g, "").split(/\r?\n/);
  const cards: Card[] = [];
  let card: (Card & { n: string }) | null = null;
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const head = line.slice(0, colon).toUpperCase();
    const value = line.slice(colon + 1);
    const prop = head.split(";")[0]!.split(".").pop()!;
    if (prop === "BEGIN" && value.toUpperCase() === "VCARD") card = { name: "", n: "", emails: [], phones: [], note: "" };
    else if (!card) continue;
    else if (prop === "END") {
      const [family = "", given = ""] = card.n.split(/(?<!\\);/).map(unescape);
      const name = (card.name || `${given} ${family}`).replace(/\s+/g, " ").trim();
      if (name) cards.push({ name, emails: card.emails, phones: card.phones, note: card.note });
      card = null;
    } else if (prop === "FN") card.name = unescape(value);
    else if (prop === "N") card.n = value;
    else if (prop === "EMAIL" && value.trim()) card.emails.push(value.trim());
    else if (prop === "TEL" && value.trim()) card.phones.push(value.replace(/^tel:/i, "").trim());
    else if (prop === "NOTE") card.note = unescape(value);
  }
  return cards;
}

/** The address book as vCard 3.0, every email and phone a contact holds. */
export function writeCards(list: Contact[]): string {
  const out: string[] = [];
  for (const c of list) {
    const words = c.name.split(" ");
    const family = words.length > 1 ? words.pop()! : "";
    out.push("BEGIN:VCARD", "VERSION:3.0", `UID:${c.id}`, `FN:${escape(c.name)}`, `N:${escape(family)};${escape(words.join(" "))};;;`);
    // Each with its kind when one is known (vCard 3.0 writes it in upper case beside INTERNET).
    const kind = (types: string[] | undefined, i: number) => (types?.[i] ? types[i]!.toUpperCase() : "");
    (c.emails ?? (c.email ? [c.email] : [])).forEach((e, i) => out.push(`EMAIL;TYPE=INTERNET${kind(c.email_types, i) && `,${kind(c.email_types, i)}`}:${e}`));
    (c.phones ?? (c.phone ? [c.phone] : [])).forEach((p, i) => out.push(`TEL${kind(c.phone_types, i) && `;TYPE=${kind(c.phone_types, i)}`}:${p}`));
    if (c.note) out.push(`NOTE:${escape(c.note)}`);
    out.push("END:VCARD");
  }
  return out.length ? `${out.join("\r\n")}\r\n` : "";
}
