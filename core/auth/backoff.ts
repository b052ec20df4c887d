// Growing waits after failed sign-ins, kept so that nobody can lock a person
// out by failing on their behalf:
// - per account and client: misses from one address (or one recognised
//   device) slow only that client's further tries for that account;
// - per account, over every client it does not recognise: a wider allowance
//   against guessing spread over many addresses. A device that has signed in
//   to the account before is not held back by it, only by its own misses.
// Tries during a wait are refused without looking at the password.
import type { Runtime } from "../runtime.ts";

interface Failures {
  count: number;
  last: number;
  until: number;
}

/** Misses one client may make before any wait; then 1 s, doubling, up to 15 minutes. */
const FREE = 3;
/** Misses from unrecognised clients together before they all wait. */
export const FREE_SPREAD = 20;
const CAP_MS = 15 * 60_000;
/** A quiet hour wipes the slate. */
const FORGET_MS = 60 * 60_000;
const MAX_ENTRIES = 50_000;

export function delayAfter(count: number, free = FREE): number {
  if (count < free) return 0;
  return Math.min(CAP_MS, 1000 * 2 ** (count - free));
}

/** Failures per key, oldest failure first, bounded in size. */
class Tally {
  private map = new Map<string, Failures>();
  constructor(private free: number) {}

  wait(key: string, now: number): number {
    const f = this.map.get(key);
    if (!f || f.until <= now) return 0;
    return Math.ceil((f.until - now) / 1000);
  }

  fail(key: string, now: number) {
    let f = this.map.get(key);
    if (f && now - f.last > FORGET_MS) f = undefined;
    if (!f) {
      if (this.map.size >= MAX_ENTRIES) this.prune(now);
      f = { count: 0, last: now, until: now };
    }
    f.count += 1;
    f.last = now;
    f.until = now + delayAfter(f.count, this.free);
    this.map.delete(key);
    this.map.set(key, f);
  }

  forget(key: string) {
    this.map.delete(key);
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

/** Who is trying: a device that signed in to this account before, or else the client address. */
export interface SignInClient {
  address: string;
  /** The id of a recognised device of this account, when the request carries one. */
  device?: string | null;
}

const clientKey = (username: string, c: SignInClient) => `${username}\n${c.device ? `d:${c.device}` : `a:${c.address}`}`;

export class SignInBackoff {
  private clients = new Tally(FREE);
  private spread = new Tally(FREE_SPREAD);

  /** Seconds before this client may try the account again; 0 when it may now. */
  wait(username: string, client: SignInClient, now: number): number {
    const own = this.clients.wait(clientKey(username, client), now);
    return client.device ? own : Math.max(own, this.spread.wait(username, now));
  }

  fail(username: string, client: SignInClient, now: number) {
    this.clients.fail(clientKey(username, client), now);
    if (!client.device) this.spread.fail(username, now);
  }

  /** The client's own slate is wiped; misses by others stay counted. */
  succeed(username: string, client: SignInClient) {
    this.clients.forget(clientKey(username, client));
  }
}

const backoffs = new WeakMap<Runtime, SignInBackoff>();
export function backoffOf(rt: Runtime): SignInBackoff {
  let b = backoffs.get(rt);
  if (!b) backoffs.set(rt, (b = new SignInBackoff()));
  return b;
}
