// Where a caller's policy is found: its token's own, or for an OAuth access
// token its grant's. Looked up on every call that a policy could hold back,
// so resolved policies are kept in memory briefly; a change is told to every
// instance through the shared state, each dropping what it kept.
import { and, eq, sql } from "drizzle-orm";
import { oauthAccess } from "../auth/oauth/schema.ts";
import type { Caller } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { OPEN, storedPolicy, type Policy } from "./rules.ts";
import { credentialPolicies, credentialSpend } from "./schema.ts";

const CHANGED = "policies:changed";
const TTL_MS = 10_000;

export interface Resolved {
  /** The credential the policy belongs to (a token's id or a grant's); null when none applies. */
  credential: string | null;
  policy: Policy;
  /** Whether the credential has a policy of its own (else it is the open one). */
  own: boolean;
}

export class Policies {
  private map = new Map<string, { r: Resolved; at: number }>();
  /** Counts changes heard: a lookup that began before one is not kept, since it may have read the old row. */
  private changes = 0;
  constructor(private readonly rt: Runtime) {
    rt.shared.subscribe(CHANGED, () => this.forget());
    rt.shared.watch(() => this.forget());
  }
  private forget() {
    this.changes++;
    this.map.clear();
  }

  /** The policy over a caller's calls: a token's (or its grant's); none for a session or a stranger, who are the owner or the public. */
  of(caller: Caller): Resolved | Promise<Resolved> {
    const id = caller.via === "token" ? caller.tokenId : undefined;
    if (!id) return { credential: null, policy: OPEN, own: false };
    const hit = this.map.get(id);
    const now = Date.now();
    if (hit && now - hit.at <= TTL_MS) return hit.r;
    const seen = this.changes;
    return this.load(id).then((r) => {
      if (this.map.size > 10_000) this.map.clear();
      if (this.rt.shared.heard && seen === this.changes) this.map.set(id, { r, at: now });
      return r;
    });
  }

  private async load(tokenId: string): Promise<Resolved> {
    const db = this.rt.store.rdb;
    const grant = await db.select({ grant: oauthAccess.grant }).from(oauthAccess).where(eq(oauthAccess.token, tokenId)).get();
    const credential = grant?.grant ?? tokenId;
    const row = await db.select({ policy: credentialPolicies.policy }).from(credentialPolicies).where(eq(credentialPolicies.credential, credential)).get();
    return { credential, policy: row ? storedPolicy(row.policy) : OPEN, own: !!row };
  }

  /** Inside a write: keeps a credential's policy (replacing what it had). */
  async put(account: string, credential: string, policy: Policy): Promise<void> {
    const now = this.rt.clock.now().getTime();
    const text = JSON.stringify(policy);
    await this.rt.store.wdb
      .insert(credentialPolicies)
      .values({ credential, account, policy: text, updated: now })
      .onConflictDoUpdate({ target: credentialPolicies.credential, set: { policy: text, updated: now } })
      .run();
    // Forgotten here, and told to the others, once it stands: before, a read could find the old row again and keep it.
    await this.rt.store.onCommit(() => {
      this.forget();
      this.rt.shared.publish(CHANGED, credential);
    });
  }

  /** The policies of an account's credentials, by credential id. */
  /**
   * Takes `credits` from the credential's allowance for `day`, in one write of
   * its own: true when they fit under `limit`. The row is updated only where
   * the sum stays within it, so of calls made at once no more pass than fit.
   */
  async reserve(credential: string, day: string, credits: number, limit: number): Promise<boolean> {
    const db = this.rt.store.wdb;
    return this.rt.store.write(async () => {
      await db.insert(credentialSpend).values({ credential, day, spent: 0 }).onConflictDoNothing().run();
      const took = await db
        .update(credentialSpend)
        .set({ spent: sql`${credentialSpend.spent} + ${credits}` })
        .where(and(eq(credentialSpend.credential, credential), eq(credentialSpend.day, day), sql`${credentialSpend.spent} + ${credits} <= ${limit}`))
        .returning({ spent: credentialSpend.spent })
        .all();
      return took.length > 0;
    });
  }

  /** Gives back what a call that failed had taken: what was spent is what was charged. */
  async release(credential: string, day: string, credits: number): Promise<void> {
    await this.rt.store.write(() =>
      this.rt.store.wdb
        .update(credentialSpend)
        .set({ spent: sql`${credentialSpend.spent} - ${credits}` })
        .where(and(eq(credentialSpend.credential, credential), eq(credentialSpend.day, day)))
        .run(),
    );
  }

  /**
   * Inside the paying call's transaction, before the payment is made: adds
   * `atomic` USDC to the credential's day in one conditional update, true when
   * it stays within `limit`. Concurrent payments wait on the row, so no more
   * pass than fit; a payment not made rolls back with its call, and the day
   * gets it back.
   */
  async reserveUsdc(credential: string, day: string, atomic: bigint, limit: bigint): Promise<boolean> {
    const db = this.rt.store.wdb;
    return this.rt.store.write(async () => {
      await db.insert(credentialSpend).values({ credential, day, spent: 0, usdc: 0 }).onConflictDoNothing().run();
      const took = await db
        .update(credentialSpend)
        .set({ usdc: sql`${credentialSpend.usdc} + ${Number(atomic)}` })
        .where(and(eq(credentialSpend.credential, credential), eq(credentialSpend.day, day), sql`${credentialSpend.usdc} + ${Number(atomic)} <= ${Number(limit)}`))
        .returning({ usdc: credentialSpend.usdc })
        .all();
      return took.length > 0;
    });
  }

  /** What a credential has paid in USDC on `day`, in the token's smallest units. */
  async usdcOn(credential: string, day: string): Promise<number> {
    const row = await this.rt.store.rdb
      .select({ usdc: credentialSpend.usdc })
      .from(credentialSpend)
      .where(and(eq(credentialSpend.credential, credential), eq(credentialSpend.day, day)))
      .get();
    return Number(row?.usdc ?? 0);
  }

  async ofAccount(account: string): Promise<Map<string, Policy>> {
    const rows = await this.rt.store.rdb.select().from(credentialPolicies).where(eq(credentialPolicies.account, account)).all();
    return new Map(rows.map((r) => [r.credential, storedPolicy(r.policy)]));
  }

  async one(account: string, credential: string): Promise<Policy | null> {
    const row = await this.rt.store.rdb
      .select()
      .from(credentialPolicies)
      .where(and(eq(credentialPolicies.account, account), eq(credentialPolicies.credential, credential)))
      .get();
    return row ? storedPolicy(row.policy) : null;
  }
}
