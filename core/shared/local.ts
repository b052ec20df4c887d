// Shared state for a single instance: plain memory, synchronous, so one
// instance pays nothing for the port.
import { Buckets } from "../auth/limits.ts";
import type { Failures, Shared } from "./index.ts";
import { Subscribers } from "./subscribers.ts";

const MAX_FAILURES = 50_000;

export class LocalShared implements Shared {
  private buckets = new Map<number, Buckets>();
  private held = new Map<string, Map<string, number>>();
  private claims = new Map<string, number>();
  /** Kept in order of latest failure, so the stalest go first when the map is full. */
  private failed = new Map<string, Failures & { forgetMs: number }>();
  private channels = new Subscribers();
  readonly heard = true;

  take(key: string, perMinute: number, now: number): number {
    let b = this.buckets.get(perMinute);
    if (!b) this.buckets.set(perMinute, (b = new Buckets(perMinute)));
    return b.take(key, now);
  }

  hold(account: string, id: string, credits: number, balance: number): number {
    let calls = this.held.get(account);
    let others = 0;
    for (const c of calls?.values() ?? []) others += c;
    if (others + credits > balance) return others;
    if (!calls) this.held.set(account, (calls = new Map()));
    calls.set(id, credits);
    return others;
  }

  unhold(account: string, id: string) {
    const calls = this.held.get(account);
    if (!calls?.delete(id) || calls.size) return;
    this.held.delete(account);
  }

  failures(key: string): Failures | null {
    return this.failed.get(key) ?? null;
  }

  fail(key: string, now: number, forgetMs: number) {
    let f = this.failed.get(key);
    if (f && now - f.last > forgetMs) f = undefined;
    if (!f) {
      if (this.failed.size >= MAX_FAILURES) this.prune(now);
      f = { count: 0, last: now, forgetMs };
    }
    f.count += 1;
    f.last = now;
    this.failed.delete(key);
    this.failed.set(key, f);
  }

  forgive(key: string) {
    this.failed.delete(key);
  }

  /** Runs only when the map is full: forgets what has lapsed, and if that frees too little, the stalest half. */
  private prune(now: number) {
    for (const [k, f] of this.failed) if (now - f.last > f.forgetMs) this.failed.delete(k);
    let drop = this.failed.size >= MAX_FAILURES ? this.failed.size / 2 : 0;
    for (const k of this.failed.keys()) {
      if (drop-- <= 0) break;
      this.failed.delete(k);
    }
  }

  claim(key: string, ttlMs: number): boolean {
    const now = Date.now();
    const until = this.claims.get(key);
    if (until !== undefined && until > now) return false;
    this.claims.set(key, now + ttlMs);
    return true;
  }

  unclaim(key: string) {
    this.claims.delete(key);
  }

  publish(channel: string, message: string) {
    this.channels.deliver(channel, message);
  }

  subscribe(channel: string, fn: (message: string) => void): () => void {
    return this.channels.add(channel, fn).stop;
  }

  watch() {}
  close() {}
}
