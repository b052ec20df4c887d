// Storing and reading messages. Each lands once per account and folder (keyed
// by Message-ID) and is indexed for search under the mail service.
import { and, desc, eq, isNull } from "drizzle-orm";
import { indexFor } from "../db/fts.ts";
import type { Store } from "../db/store.ts";
import type { Db } from "../plugin.ts";
import { mailMessages } from "./schema.ts";

export type MessageRow = typeof mailMessages.$inferSelect;

/** Longest body kept, in characters; the raw message keeps the rest. */
export const BODY_CAP = 1_000_000;

/** Inserts a message unless this account already holds it in that folder; returns the row when stored. */
export async function storeMessage(store: Store, row: MessageRow): Promise<MessageRow | null> {
  const [stored] = await store.wdb
    .insert(mailMessages)
    .values({ ...row, body: row.body.slice(0, BODY_CAP) })
    .onConflictDoNothing()
    .returning()
    .all();
  if (!stored) return null;
  await indexFor(store, "mail", false).put({
    kind: "message",
    ref: stored.id,
    owner: stored.account,
    title: stored.subject,
    body: `${stored.from}\n${stored.to}\n${stored.body}`,
  });
  return stored;
}

export function recent(db: Db, account: string, o: { folder?: string; tag?: string | null; limit: number }): Promise<MessageRow[]> {
  const where = [eq(mailMessages.account, account), eq(mailMessages.folder, o.folder ?? "inbox")];
  if (o.tag !== undefined) where.push(o.tag === null ? isNull(mailMessages.tag) : eq(mailMessages.tag, o.tag));
  return db
    .select()
    .from(mailMessages)
    .where(and(...where))
    .orderBy(desc(mailMessages.at), desc(mailMessages.id))
    .limit(o.limit)
    .all();
}

export function messageById(db: Db, account: string, id: string): Promise<MessageRow | undefined> {
  return db
    .select()
    .from(mailMessages)
    .where(and(eq(mailMessages.account, account), eq(mailMessages.id, id)))
    .get();
}

/** A message as every surface shows it. */
export function shapeMessage(m: MessageRow) {
  return {
    id: m.id,
    folder: m.folder,
    from: m.from,
    to: m.to,
    tag: m.tag,
    subject: m.subject,
    body: m.body,
    at: new Date(m.at).toISOString(),
    message_id: m.messageId,
    in_reply_to: m.inReplyTo,
    ...(m.delivery ? { delivery: m.delivery } : {}),
    ...(m.auth ? { auth: JSON.parse(m.auth) as unknown } : {}),
  };
}
