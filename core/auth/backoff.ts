// Growing waits after failed sign-ins, kept so that nobody can lock a person
// out by failing on their behalf:
// - per account and client: misses from one address slow only that
//   address's further tries for that account; the devices the account
//   recognises count as one client, so holding more of their cookies buys
//   no more tries;
// - per account, over every client it does not recognise: a wider allowance
//   against guessing spread over many addresses. A device that has signed in
//   to the account before is not held back by it, only by the misses of
//   the account's devices.
// Tries during a wait are refused without looking at the password.
import type { Runtime } from "../runtime.ts";
import type { Shared } from "../shared/index.ts";

/** Misses one client may make before any wait; then 1 s, doubling, up to 15 minutes. */
const FREE = 3;
/** Misses from unrecognised clients together before they all wait. */
export const FREE_SPREAD = 20;
const CAP_MS = 15 * 60_000;
/** A quiet hour wipes the slate. */
const FORGET_MS = 60 * 60_000;

export function delayAfter(count: number, free = FREE): number {
  if (count < free) return 0;
  return Math.min(CAP_MS, 1000 * 2 ** (count - free));
}

/**
 * Failures per key, counted in the instance's shared state, so misses spread
 * over the instances of one deployment add up as if made on one.
 */
class Tally {
  constructor(
    private shared: Shared,
    private kind: string,
    private free: number,
  ) {}

  async wait(key: string, now: number): Promise<number> {
    const f = await this.shared.failures(`${this.kind}:${key}`);
    if (!f || now - f.last > FORGET_MS) return 0;
    const until = f.last + delayAfter(f.count, this.free);
    return until <= now ? 0 : Math.ceil((until - now) / 1000);
  }

  fail(key: string, now: number) {
    return this.shared.fail(`${this.kind}:${key}`, now, FORGET_MS);
  }

  async forget(key: string) {
    await this.shared.forgive(`${this.kind}:${key}`);
  }
}

/** Who is trying: a device that signed in to this account before, or else the client address. */
export interface SignInClient {
  address: string;
  /** The id of a recognised device of this account, when the request carries one. */
  device?: string | null;
}

/** An address's own count, or the one count every recognised device of the account shares. */
const clientKey = (username: string, c: SignInClient) => `${username}\n${c.device ? "devices" : `a:${c.address}`}`;

export class SignInBackoff {
  private clients: Tally;
  private spread: Tally;
  constructor(shared: Shared) {
    this.clients = new Tally(shared, "signin-client", FREE);
    this.spread = new Tally(shared, "signin-spread", FREE_SPREAD);
  }

  /** Seconds before this client may try the account again; 0 when it may now. */
  async wait(username: string, client: SignInClient, now: number): Promise<number> {
    const own = await this.clients.wait(clientKey(username, client), now);
    return client.device ? own : Math.max(own, await this.spread.wait(username, now));
  }

  async fail(username: string, client: SignInClient, now: number) {
    await this.clients.fail(clientKey(username, client), now);
    if (!client.device) await this.spread.fail(username, now);
  }

  /**
   * The client's own slate is wiped; misses by others stay counted. Awaited before the sign-in answers: a wipe still
   * on its way to the shared state could land after the client's next miss and erase it.
   */
  async succeed(username: string, client: SignInClient) {
    await this.clients.forget(clientKey(username, client));
  }
}

const backoffs = new WeakMap<Runtime, SignInBackoff>();
export function backoffOf(rt: Runtime): SignInBackoff {
  let b = backoffs.get(rt);
  if (!b) backoffs.set(rt, (b = new SignInBackoff(rt.shared)));
  return b;
}
