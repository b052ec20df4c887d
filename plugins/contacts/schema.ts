import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const contacts = sqliteTable(
  "contacts",
  {
    id: text("id").primaryKey(),
    owner: text("owner").notNull(),
    name: text("name").notNull(),
    /** Lowercased name: names are unique per address book regardless of case. */
    nameKey: text("name_key").notNull(),
    email: text("email").notNull().default(""),
    phone: text("phone").notNull().default(""),
    /** The phone's digits alone, so "+44 20 7946 0958" is found by "2079460958". */
    phoneDigits: text("phone_digits").notNull().default(""),
    note: text("note").notNull().default(""),
    /**
     * The card's other email addresses and phone numbers (JSON lists), beside
     * the primary ones above, as a synced address book sent them: shown in
     * answers, changed by the card alone.
     */
    otherEmails: text("other_emails").notNull().default("[]"),
    otherPhones: text("other_phones").notNull().default("[]"),
    /**
     * What kind each email address and phone number is ("home", "work",
     * "cell"…; "" for none), as JSON lists beside the primary and the others
     * in order; "" when nothing says (a contact made with `email` alone).
     */
    emailTypes: text("email_types").notNull().default(""),
    phoneTypes: text("phone_types").notNull().default(""),
    created: integer("created").notNull(),
    updated: integer("updated").notNull(),
  },
  (t) => [uniqueIndex("contacts_owner_name").on(t.owner, t.nameKey), index("contacts_owner").on(t.owner)],
);
