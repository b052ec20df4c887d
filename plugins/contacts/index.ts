import { Type as T } from "@sinclair/typebox";
import { and, asc, eq, gt } from "drizzle-orm";
import { newId, invalid, notFound, pageAnswer, pageArgs, pageOf, definePlugin, read, write } from "hearth";
import { contactsBook } from "./dav.ts";
import { digits, findQuery } from "./find.ts";
import { listOf } from "./lists.ts";
import { contacts } from "./schema.ts";

type Row = typeof contacts.$inferSelect;

/** The kinds kept beside a list, one for each of its entries ("" for none); null when none is kept. */
function typesOf(json: string, count: number): string[] | null {
  if (!json) return null;
  const t = listOf(json);
  return t.some(Boolean) ? Array.from({ length: count }, (_v, i) => t[i] ?? "") : null;
}

const shape = (c: Row) => {
  const emails = [c.email, ...listOf(c.otherEmails)].filter(Boolean);
  const phones = [c.phone, ...listOf(c.otherPhones)].filter(Boolean);
  const emailTypes = typesOf(c.emailTypes, emails.length);
  const phoneTypes = typesOf(c.phoneTypes, phones.length);
  return {
    id: c.id,
    name: c.name,
    email: c.email || null,
    phone: c.phone || null,
    // A card synced from an address book, or a contact given lists, may hold more: every one, the primary first, with its kind when one is known.
    ...(emails.length > 1 || emailTypes ? { emails } : {}),
    ...(emailTypes ? { email_types: emailTypes } : {}),
    ...(phones.length > 1 || phoneTypes ? { phones } : {}),
    ...(phoneTypes ? { phone_types: phoneTypes } : {}),
    note: c.note || null,
    created: new Date(c.created).toISOString(),
    updated: new Date(c.updated).toISOString(),
  };
};

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE = /^\+?[0-9 ()./-]{3,32}$/;

const Kind = T.Optional(T.String({ maxLength: 20, pattern: "^[A-Za-z][A-Za-z-]*$|^$", description: 'home, work, cell… ("" or omitted for none)' }));
const Entries = (what: string, maxLength: number) =>
  T.Optional(
    T.Array(T.Object({ value: T.String({ maxLength }), type: Kind }), {
      maxItems: 20,
      description: `Every ${what} the contact has, each with its kind, the primary first; replaces those it had ([] removes them all).`,
    }),
  );

/** A list given to contacts/add, checked whole before anything is written: its values (the primary first) and their kinds. */
function entries(field: "emails" | "phones", list: { value: string; type?: string }[], ok: RegExp, says: string) {
  const values = list.map((e, i) => {
    const v = e.value.trim();
    if (!ok.test(v)) throw invalid(field, `${field}[${i}] ${says} (got ${JSON.stringify(e.value)})`);
    return v;
  });
  return { first: values[0] ?? "", others: JSON.stringify(values.slice(1)), types: JSON.stringify(list.map((e) => (e.type ?? "").toLowerCase())) };
}
export default definePlugin({
  name: "contacts",
  description: "The caller's address book: names (unique, whatever the case), email addresses, phone numbers and notes.",
  needs: ["db", "call", "lock"],
  dav: contactsBook,
  screens: { contacts: { title: "Contacts", module: "screens/contacts.ts", order: 30, reads: [{ method: "list", args: { limit: 1000 } }] } },
  methods: {
    add: write({
      description: "Saves a contact. A name already in the address book (in any case) is updated, not duplicated; omitted fields keep their value.",
      args: T.Object({
        name: T.String({ minLength: 1, maxLength: 200 }),
        email: T.Optional(T.String({ maxLength: 320 })),
        phone: T.Optional(T.String({ maxLength: 32 })),
        note: T.Optional(T.String({ maxLength: 10_000 })),
        // Beyond the spec (README, "Additions to the spec"): a card's every address and number, as a person edits them.
        emails: Entries("email address", 320),
        phones: Entries("phone number", 32),
      }),
      access: "account",
      destructive: true,
      async run(a, ctx) {
        const name = a.name.trim().replace(/\s+/g, " ");
        if (!name) throw invalid("name", "name must not be blank");
        if (a.email !== undefined && a.emails !== undefined) throw invalid("emails", "give email or emails, not both");
        if (a.phone !== undefined && a.phones !== undefined) throw invalid("phones", "give phone or phones, not both");
        const emails = a.emails && entries("emails", a.emails, EMAIL, "is not an address");
        const phones = a.phones && entries("phones", a.phones, PHONE, "may hold digits, spaces, +, (, ), ., / and - only");
        const email = emails ? emails.first : a.email?.trim();
        if (email && !EMAIL.test(email)) throw invalid("email", `email is not an address (got ${JSON.stringify(a.email)})`);
        const phone = phones ? phones.first : a.phone?.trim();
        if (phone && !PHONE.test(phone)) throw invalid("phone", `phone may hold digits, spaces, +, (, ), ., / and - only (got ${JSON.stringify(a.phone)})`);
        const now = ctx.clock.now().getTime();
        const key = name.toLowerCase();
        // One statement: a new name is inserted; a name already kept (in any case) gets only the fields given, so two adds at once each keep theirs.
        const given = {
          name,
          ...(email !== undefined && { email }),
          ...(phone !== undefined && { phone, phoneDigits: digits(phone) }),
          ...(a.note !== undefined && { note: a.note }),
          ...(emails && { otherEmails: emails.others, emailTypes: emails.types }),
          ...(phones && { otherPhones: phones.others, phoneTypes: phones.types }),
          updated: now,
        };
        const id = newId();
        const row = await ctx.db
          .insert(contacts)
          .values({ id, owner: ctx.account.id, nameKey: key, email: "", phone: "", phoneDigits: "", note: "", created: now, ...given })
          .onConflictDoUpdate({ target: [contacts.owner, contacts.nameKey], set: given })
          .returning()
          .get();
        return { ...shape(row), updated_existing: row.id !== id };
      },
    }),
    delete: write({
      description: "Removes a contact by id.",
      args: T.Object({ id: T.String({ minLength: 1, maxLength: 64 }) }),
      access: "account",
      destructive: true,
      async run({ id }, ctx) {
        const gone = await ctx.db
          .delete(contacts)
          .where(and(eq(contacts.id, id), eq(contacts.owner, ctx.account.id)))
          .returning({ id: contacts.id })
          .all();
        if (!gone.length) throw notFound(`no contact with id "${id}"`);
        return { deleted: id };
      },
    }),
    find: read({
      description: "Finds contacts whose name contains the query (any case), or whose email or phone number contains it.",
      args: T.Object({ query: T.String({ minLength: 1, maxLength: 200 }) }),
      access: "account",
      async run({ query }, ctx) {
        const q = query.trim().toLowerCase();
        if (!q) throw invalid("query", "query must not be blank");
        const rows = await findQuery(ctx.db, ctx.account.id, q).all();
        return rows.map(shape);
      },
    }),
    list: read({
      description: "Everyone in the caller's address book, by name (at most 1,000; `limit` and `cursor` read them in pages).",
      args: T.Object({ ...pageArgs }),
      access: "account",
      async run(args, ctx) {
        // By the name's key, unique in an address book: the order of the contacts_owner_name index.
        const page = pageOf(args, ["string"]);
        const mine = eq(contacts.owner, ctx.account.id);
        const where = page.after ? and(mine, gt(contacts.nameKey, page.after[0] as string)) : mine;
        const rows = await ctx.db.select().from(contacts).where(where).orderBy(asc(contacts.nameKey)).limit(page.read).all();
        return pageAnswer(rows, page, (c) => [c.nameKey], (rows) => rows.map(shape));
      },
    }),
  },
});
