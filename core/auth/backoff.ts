// A growing wait per username after failed sign-ins, so guessing one person's
// password gets slower with every miss while other people sign in as usual.
// Tries during the wait are refused without looking at the password.
import type { Runtime } from "../runtime.ts";

interface Failures {
  count: number;
  last: number;
  until: number;
}

/** Misses allowed before any wait; then 1 s, doubling, up to 15 minutes. */
const FREE = 3;
const CAP_MS = 15 * 60_000;
/** A quiet hour wipes the slate. */
const FORGET_MS = 60 * 60_000;
const MAX_ENTRIES = 50_000;

export function delayAfter(count: number): number {
  if (count < FREE) return 0;
  return Math.min(CAP_MS, 1000 * 2 ** (count - FREE));
}

export class SignInBackoff {
  private map = new Map<string, Failures>();

  /** Seconds before username may try again; 0 when it may now. */
  wait(username: string, now: number): number {
    const f = this.map.get(username);
    if (!f || f.until <= now) return 0;
    return Math.ceil((f.until - now) / 1000);
  }

  fail(username: string, now: number) {
    let f = this.map.get(username);
    if (f && now - f.last > FORGET_MS) f = undefined;
    if (!f) {
      if (this.map.size >= MAX_ENTRIES) this.prune(now);
      f = { count: 0, last: now, until: now };
    }
    f.count += 1;
    f.last = now;
    f.until = now + delayAfter(f.count);
    this.map.delete(username);
    this.map.set(username, f);
  }

  succeed(username: string) {
    this.map.delete(username);
  }

  private prune(now: number) {
    for (const [k, f] of this.map) if (now - f.last > FORGET_MS) this.map.delete(k);
    // Still full: entries are kept in order of last failure, so drop the stalest half.
    let drop = this.map.size >= MAX_ENTRIES ? this.map.size / 2 : 0;
    for (const k of this.map.keys()) {
      if (drop-- <= 0) break;
      this.map.delete(k);
    }
  }
}

const backoffs = new WeakMap<Runtime, SignInBackoff>();
export function backoffOf(rt: Runtime): SignInBackoff {
  let b = backoffs.get(rt);
  if (!b) backoffs.set(rt, (b = new SignInBackoff()));
  return b;
}
