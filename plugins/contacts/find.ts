// contacts/find's query: the caller's contacts whose name holds the query
// (any case), or whose email addresses do, or whose phone number's digits
// hold a query that is mostly a number.
import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import { storeKind, type Db } from "hearth";
import { contacts } from "./schema.ts";

export const digits = (s: string) => s.replace(/\D/g, "");

/** LIKE with the caller's text taken literally. */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The find for `q` (trimmed and lowercased), by name. */
export function findQuery(db: Db, owner: string, q: string) {
  const like = `%${likeEscape(q)}%`;
  const d = digits(q);
  // Only a query that is mostly a number is compared by digits, so "Anne 2" does not match every phone with a 2.
  const byDigits = d.length >= 3 && d.length >= q.replace(/\s/g, "").length - 2;
  const conds = [sql`${contacts.nameKey} LIKE ${like} ESCAPE '\\'`, sql`lower(${contacts.email}) LIKE ${like} ESCAPE '\\'`, sql`lower(${contacts.otherEmails}) LIKE ${like} ESCAPE '\\'`];
  if (byDigits) conds.push(sql`${contacts.phoneDigits} LIKE ${`%${d}%`}`);
  const matches = sql`(${sql.join(conds, sql` OR `)})`;
  const found = indexed(db, owner, q, byDigits ? d : null);
  // Through the trigram index, the contacts it holds for the query, each then checked by the LIKEs above;
  // the owner's "+" keeps SQLite from reading the whole address book by its owner index instead.
  const where = found ? and(sql`+${contacts.owner} = ${owner}`, found, matches) : and(eq(contacts.owner, owner), matches);
  return db.select().from(contacts).where(where).orderBy(asc(contacts.nameKey));
}

/** The span of rowids in contacts_find each account's entries have: 2^40. */
const SLOT = 1099511627776;

/**
 * On SQLite, the caller's contacts the trigram index (contacts_find, migration 0003)
 * holds for the query, as a condition on the contact's rowid. It holds every
 * contact the LIKEs match, and maybe more (it folds case beyond ASCII), so
 * the LIKEs still decide. Null where it cannot serve: on PostgreSQL, whose
 * trigram indexes serve the LIKEs themselves; for a query under three
 * characters, which holds no trigram (the address book is then read row by
 * row, as such a query's many matches would be anyway); and for a NUL,
 * at which FTS5 would end the query.
 */
function indexed(db: Db, owner: string, q: string, phoneDigits: string | null): SQL | null {
  if (storeKind(db) !== "sqlite" || [...q].length < 3 || q.includes("\0")) return null;
  const phrase = (s: string) => `"${s.replaceAll('"', '""')}"`;
  const match = `{name_key email other_emails} : ${phrase(q)}${phoneDigits ? ` OR phone_digits : ${phrase(phoneDigits)}` : ""}`;
  // The caller's entries alone: their rowids are the slot's range (migration 0003), less the slot the contact's rowid.
  const base = sql`(SELECT slot FROM contacts_find_owners WHERE owner = ${owner}) * ${SLOT}`;
  return sql`${contacts}.rowid IN (SELECT rowid & ${SLOT - 1} FROM contacts_find WHERE contacts_find MATCH ${match} AND rowid BETWEEN ${base} AND ${base} + ${SLOT - 1})`;
}
