// Notices for a person's next sign-in: when someone else changed how they
// sign in (an admin turned their two-factor sign-in off), they are told so
// the first time they are back, on /account, and the notice is then gone.
import { and, asc, eq, inArray } from "drizzle-orm";
import type { Runtime } from "../runtime.ts";
import { accountNotices } from "./schema.ts";

/** Keeps a notice for the account (inside the caller's write, or in its own). */
export async function tell(rt: Runtime, accountId: string, text: string): Promise<void> {
  await rt.store.write(() => rt.store.wdb.insert(accountNotices).values({ account: accountId, at: rt.clock.now().getTime(), text }).run());
}

/** Whether the account has notices it has not seen. */
export async function hasNotices(rt: Runtime, accountId: string): Promise<boolean> {
  return !!(await rt.store.rdb.select({ id: accountNotices.id }).from(accountNotices).where(eq(accountNotices.account, accountId)).limit(1).get());
}

/** The account's unseen notices, oldest first, removed as they are read: each is shown once. */
export async function takeNotices(rt: Runtime, accountId: string): Promise<string[]> {
  if (!(await hasNotices(rt, accountId))) return [];
  return rt.store.write(async () => {
    const rows = await rt.store.wdb.select({ id: accountNotices.id, text: accountNotices.text }).from(accountNotices).where(eq(accountNotices.account, accountId)).orderBy(asc(accountNotices.id)).all();
    if (rows.length)
      await rt.store.wdb
        .delete(accountNotices)
        .where(and(eq(accountNotices.account, accountId), inArray(accountNotices.id, rows.map((r) => r.id))))
        .run();
    return rows.map((r) => r.text);
  });
}

/** The account's unseen notices, for a program's sign-in answer (taken: they are not shown again). */
export async function noticesFor(rt: Runtime, account: { id: string }): Promise<{ notices?: string[] }> {
  const notices = await takeNotices(rt, account.id);
  return notices.length ? { notices } : {};
}
