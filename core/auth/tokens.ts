// Accounts and bearer tokens. Tokens are stored only as sha256 hashes and
// looked up by hash, so comparing them takes no secret-dependent time.
import { and, desc, eq, isNull } from "drizzle-orm";
import { mapAnswer } from "../answer.ts";
import { HearthError, invalid, unauthenticated } from "../errors.ts";
import type { Account, Caller } from "../plugin.ts";
import type { Store } from "../db/index.ts";
import type { Shared } from "../shared/index.ts";
import { accounts, tokens } from "../db/schema.ts";
import { hashToken, newId, newToken } from "./ids.ts";

export const USERNAME = /^[a-z0-9_-]{3,32}$/;

/**
 * Inside a write: whether the account about to be made is the instance's
 * first, which becomes its admin. While there is none, writes asking hold
 * one key in turn, so of two made at once on an empty instance only one is
 * first; once there are accounts nothing is held.
 */
export async function isFirst(store: Store): Promise<boolean> {
  const any = () => store.wdb.select({ id: accounts.id }).from(accounts).limit(1).get();
  if (await any()) return false;
  await store.lock("accounts:first");
  return !(await any());
}

export async function ensureAccount(store: Store, username: string, opts: { admin?: boolean } = {}): Promise<Account> {
  if (!USERNAME.test(username)) throw invalid("username", "usernames are 3-32 characters of a-z, 0-9, _ and -");
  return store.write(async () => {
    const existing = async (): Promise<Account | null> => {
      const found = await store.wdb.select().from(accounts).where(eq(accounts.username, username)).get();
      if (!found) return null;
      if (opts.admin && !found.admin) await store.wdb.update(accounts).set({ admin: true }).where(eq(accounts.id, found.id)).run();
      return { id: found.id, username: found.username, admin: found.admin || !!opts.admin };
    };
    const found = await existing();
    if (found) return found;
    const row = { id: newId(), username, admin: !!opts.admin || (await isFirst(store)), created: Date.now() };
    // Made at once elsewhere: the username's unique key keeps one, and this answers with it.
    const made = await store.wdb.insert(accounts).values(row).onConflictDoNothing({ target: accounts.username }).returning({ id: accounts.id }).all();
    if (made.length) return { id: row.id, username, admin: row.admin };
    return (await existing())!;
  });
}

export function findAccount(store: Store, username: string): Promise<Account | null> {
  const r = store.rdb.select().from(accounts).where(eq(accounts.username, username)).get();
  return mapAnswer(r, (r) => (r ? { id: r.id, username: r.username, admin: r.admin } : null));
}

export interface IssuedToken {
  token: string;
  id: string;
  scopes: "*" | string[];
  expires: string | null;
}

export async function issueToken(
  store: Store,
  account: Account,
  opts: { name?: string; scopes?: "*" | string[]; expires?: Date | null; now?: Date } = {},
): Promise<IssuedToken> {
  const token = newToken();
  const id = newId();
  const scopes = opts.scopes ?? "*";
  await store.write(() =>
    store.wdb
      .insert(tokens)
      .values({
        id,
        account: account.id,
        hash: hashToken(token),
        name: opts.name ?? "token",
        scopes: scopes === "*" ? "*" : scopes.join(","),
        created: (opts.now ?? new Date()).getTime(),
        expires: opts.expires ? opts.expires.getTime() : null,
      })
      .run(),
  );
  return { token, id, scopes, expires: opts.expires ? opts.expires.toISOString() : null };
}

export async function revokeToken(store: Store, accountId: string, id: string, cache?: TokenCache): Promise<boolean> {
  const done = await store.write(() =>
    store.wdb
      .update(tokens)
      .set({ revoked: Date.now() })
      .where(and(eq(tokens.id, id), eq(tokens.account, accountId)))
      .returning({ hash: tokens.hash })
      .all(),
  );
  for (const r of done) cache?.forget(r.hash);
  return done.length > 0;
}

interface Cached {
  caller: Caller;
  expires: number | null;
  at: number;
}

const REVOKED = "tokens:revoked";
/** A revocation may be told before its transaction commits: until then a read still finds the token valid, so it is not cached. */
const SETTLE_MS = 5_000;

/**
 * Bearer lookups are on every call's path, so resolved tokens are kept in
 * memory briefly. A revocation is told to every instance (through the shared
 * state), each dropping the token at once; while an instance cannot hear the
 * others it caches nothing and asks the database on every call.
 */
export class TokenCache {
  private map = new Map<string, Cached>();
  private touched = new Map<string, number>();
  /** sha256 of tokens seen lately: hashing is a third of identifying a cached caller. */
  private hashes = new Map<string, string>();
  /** Tokens revoked lately, with when this instance heard of it. */
  private revoked = new Map<string, number>();
  constructor(
    private store: Store,
    private shared: Shared,
    private ttlMs = 30_000,
  ) {
    shared.subscribe(REVOKED, (hash) => this.drop(hash));
    shared.watch(() => this.clear());
  }

  /** Drops a revoked token here and on every other instance. */
  forget(hash: string) {
    this.drop(hash);
    this.shared.publish(REVOKED, hash);
  }
  private drop(hash: string) {
    this.map.delete(hash);
    const now = Date.now();
    if (this.revoked.size > 1_000) for (const [h, at] of this.revoked) if (now - at > SETTLE_MS) this.revoked.delete(h);
    this.revoked.set(hash, now);
  }
  clear() {
    this.map.clear();
  }
  private cacheable(hash: string): boolean {
    if (!this.shared.heard) return false;
    const at = this.revoked.get(hash);
    return at === undefined || Date.now() - at > SETTLE_MS;
  }

  /**
   * Resolves a bearer token to a caller, or refuses with 401. A token cached
   * lately answers at once; only one looked up in the database is a promise.
   */
  identify(token: string, now: number): Caller | Promise<Caller> {
    let hash = this.hashes.get(token);
    if (hash === undefined) {
      hash = hashToken(token);
      if (this.hashes.size > 10_000) this.hashes.clear();
      this.hashes.set(token, hash);
    }
    const hit = this.map.get(hash);
    if (hit && now - hit.at <= this.ttlMs) return this.use(hit, now);
    return this.load(hash, now).then((loaded) => this.use(loaded, now));
  }

  private async load(hash: string, now: number): Promise<Cached> {
    const row = await this.store.rdb
      .select({
        id: tokens.id,
        name: tokens.name,
        scopes: tokens.scopes,
        expires: tokens.expires,
        revoked: tokens.revoked,
        accountId: accounts.id,
        username: accounts.username,
        admin: accounts.admin,
      })
      .from(tokens)
      .innerJoin(accounts, eq(accounts.id, tokens.account))
      .where(eq(tokens.hash, hash))
      .get();
    if (!row || row.revoked) {
      this.map.delete(hash);
      throw unauthenticated("the token is not valid (unknown or revoked)");
    }
    const hit: Cached = {
      caller: {
        account: { id: row.accountId, username: row.username, admin: row.admin },
        scopes: row.scopes === "*" ? "*" : row.scopes.split(",").filter(Boolean),
        via: "token",
        tokenId: row.id,
        tokenName: row.name,
      },
      expires: row.expires,
      at: now,
    };
    if (this.map.size > 10_000) this.map.clear();
    if (this.cacheable(hash)) this.map.set(hash, hit);
    return hit;
  }

  private use(hit: Cached, now: number): Caller {
    if (hit.expires !== null && hit.expires <= now) throw unauthenticated("the token has expired");
    this.touch(hit.caller.tokenId!, now);
    return hit.caller;
  }

  /** Records last use at most once a minute per token, off the request path. */
  private touch(id: string, now: number) {
    const last = this.touched.get(id) ?? 0;
    if (now - last < 60_000) return;
    this.touched.set(id, now);
    queueMicrotask(() => {
      this.store.exclusive(() => this.store.wdb.update(tokens).set({ lastUsed: now }).where(eq(tokens.id, id)).run()).catch(() => {});
    });
  }
}

export function assertScope(caller: Caller, service: string) {
  if (caller.scopes === "*" || caller.scopes.includes(service)) return;
  throw new HearthError("forbidden", `this token's scope does not include "${service}" (it allows: ${caller.scopes.join(", ") || "nothing"})`, {
    extra: { missing_scope: service },
  });
}

/** The services both allow: work done for someone never gets more than they had, nor more than its own bounds. */
export function intersectScopes(a: "*" | string[], b: "*" | string[]): "*" | string[] {
  if (a === "*") return b === "*" ? "*" : [...b];
  if (b === "*") return [...a];
  return a.filter((s) => b.includes(s));
}

/** Scopes as a text column keeps them: "*" or a JSON list. */
export const scopesText = (s: "*" | string[]) => (s === "*" ? "*" : JSON.stringify(s));

/** Reads scopesText back; anything unreadable is no scope at all. */
export function scopesFromText(t: string | null | undefined): "*" | string[] {
  if (t === "*") return "*";
  try {
    const v: unknown = JSON.parse(t ?? "[]");
    return Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : [];
  } catch {
    return [];
  }
}

export interface TokenInfo {
  id: string;
  name: string;
  scopes: "*" | string[];
  created: string;
  last_used: string | null;
  expires: string | null;
  expired: boolean;
}

const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

/** An account's tokens that are not revoked, newest first; expired ones say so. */
export async function listTokens(store: Store, accountId: string, now: number): Promise<TokenInfo[]> {
  const rows = await store.rdb
    .select()
    .from(tokens)
    .where(and(eq(tokens.account, accountId), isNull(tokens.revoked)))
    .orderBy(desc(tokens.created), desc(tokens.id))
    .all();
  return rows.map((t) => ({
      id: t.id,
      name: t.name,
      scopes: t.scopes === "*" ? "*" : t.scopes.split(",").filter(Boolean),
      created: iso(t.created)!,
      last_used: iso(t.lastUsed),
      expires: iso(t.expires),
      expired: t.expires !== null && t.expires <= now,
    }));
}

/**
 * Reads a requested scope: "*" (or nothing) for every service, else service
 * names that must each be in the registry. The names come from the registry,
 * so a service added later is a scope at once.
 */
export function parseScopes(raw: unknown, services: string[]): "*" | string[] {
  if (raw === undefined || raw === null || raw === "*" || raw === "") return "*";
  const list = typeof raw === "string" ? raw.split(",") : Array.isArray(raw) ? raw : null;
  if (!list || list.some((s) => typeof s !== "string")) throw invalid("scopes", 'scopes is "*" or a list of service names');
  const names = [...new Set((list as string[]).map((s) => s.trim()).filter(Boolean))];
  if (names.includes("*")) return "*";
  if (names.length === 0) throw invalid("scopes", "choose at least one service, or all services");
  const known = new Set(services);
  const unknown = names.filter((n) => !known.has(n));
  if (unknown.length) throw invalid("scopes", `no service named ${unknown.map((u) => `"${u}"`).join(", ")} (services are: ${services.join(", ")})`);
  return names.sort();
}

export const TOKEN_NAME_MAX = 100;

export function parseTokenName(raw: unknown): string {
  if (raw === undefined || raw === null || raw === "") throw invalid("name", "give the token a name, so you know it again when you revoke it");
  if (typeof raw !== "string") throw invalid("name", "name is a string");
  const n = raw.trim();
  if (!n) throw invalid("name", "give the token a name, so you know it again when you revoke it");
  if (n.length > TOKEN_NAME_MAX) throw invalid("name", `a token's name has at most ${TOKEN_NAME_MAX} characters (got ${n.length})`);
  return n;
}

/** An expiry from an RFC3339 time ("expires") or a number of days ("days"); null for none. */
export function parseExpiry(input: { expires?: unknown; days?: unknown }, now: number): Date | null {
  const { expires, days } = input;
  if (days !== undefined && days !== null && days !== "") {
    const d = typeof days === "number" ? days : Number(days);
    if (!Number.isFinite(d) || d <= 0 || d > 3650) throw invalid("days", "days is a number of days between 0 and 3650");
    return new Date(now + Math.round(d * 86_400_000));
  }
  if (expires === undefined || expires === null || expires === "" || expires === "never") return null;
  if (typeof expires !== "string" || !/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(expires))
    throw invalid("expires", 'expires is an RFC3339 time such as "2027-01-31T00:00:00Z" (or a date, or "never")');
  const at = new Date(expires);
  if (Number.isNaN(at.getTime())) throw invalid("expires", `"${expires}" is not a real time`);
  if (at.getTime() <= now) throw invalid("expires", "expires must be in the future");
  return at;
}

/**
 * For plugin pages and webhooks, which serve strangers too: a caller whose
 * scope leaves out the service is seen there as a stranger, so a narrow
 * token still opens public pages but carries none of its account's powers.
 */
export function withinScope(caller: Caller, service: string): Caller {
  if (caller.scopes === "*" || caller.scopes.includes(service) || (caller.via !== "token" && caller.via !== "session")) return caller;
  return { account: null, scopes: [], via: "none", address: caller.address };
}
