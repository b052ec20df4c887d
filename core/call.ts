// One call's own state. Dispatch makes one for every call, outermost or
// nested, and hands it down to the handler's context and capabilities: what a
// call learns about itself (its price, how it pays, whether a cache answered
// it) is kept here, on the call, and never in a table keyed by an id that a
// client, or another call, could repeat.
import type { Caller } from "./plugin.ts";
import type { Store } from "./db/store.ts";
import type { RoundTrip } from "./policy/approvals.ts";

export interface Call {
  /** Made by the server, unique per call: what the log and the ledger name. A nested call's extends its parent's. */
  readonly id: string;
  readonly caller: Caller;
  /** The call this one was made from (ctx.call, the agent's tools, apps/test, paying this instance); null for the outermost. */
  readonly parent: Call | null;
  /** The outermost call of the chain: rate limits count against its caller. */
  readonly root: Call;
  /** What the code starting the call tells its handler (how an agent run was started); nested calls do not inherit it. */
  readonly hint: unknown;
  /** Credits this call costs, once priced. */
  price: number;
  /** What metering holds for this call between its check before the run and its charge after. */
  plan: unknown;
  /** Provider requests this call made itself: sent out, and answered from cache. */
  readonly upstream: { network: number; cached: number };
  /** Nested calls made from this one so far, for their ids. */
  nested: number;
  /** Where a call a surface makes for itself outside dispatch (a DAV request) came in (dav, ...): the calls made from it say the same in the audit log. Dispatch's own calls leave it unset (their children say "nested"). */
  surface?: string;
  /**
   * How to ask the person at the client this call came from, when its
   * protocol lets the server ask (an MCP client that declared elicitation):
   * true for approved, false for declined. Nested calls ask through their outermost call's.
   */
  ask?: (question: { message: string; id: string }) => Promise<boolean | null>;
  /** For an outermost call whose client is asked in its answer and calls again with the reply (MCP 2026-07-28; core/policy/approvals.ts). */
  roundTrip?: RoundTrip;
  /** Credits taken from its credential's daily allowance before it ran (core/policy): given back if it fails. */
  allowance?: { credential: string; day: string; credits: number };
  /** The person who approved the call, when its credential's policy asked them (core/policy): what the audit log says. */
  approvedBy?: string;
  /** Writes the call started into its transaction without the handler waiting for them (an activity event): finished before the call commits. */
  pending?: Promise<unknown>[];
  /**
   * On the outermost call of a scheduled firing (core/scheduler): run first
   * in every write transaction opened for that call or one made from it
   * (writeFor), it throws once the firing has passed to another instance, so
   * an instance that stalled past its lease writes nothing of it. `acts`: the
   * transaction is the firing's effect, and the firing is marked as having
   * acted in it, so that mark commits with the effect and only with it.
   */
  fence?: (acts: boolean) => Promise<void>;
}

/**
 * Runs fn in a write transaction opened for a call, or in the one already
 * running. A transaction opened for a scheduled firing's call first checks,
 * inside it, that the firing is still this instance's (Call.fence): what fn
 * writes then commits only with that check, or not at all; and with it the
 * mark that the firing has acted, so an instance taking it over later does
 * not run it again.
 */
export function writeFor<T>(store: Store, call: Call, fn: () => T | Promise<T>): Promise<T> {
  const fence = call.root.fence;
  if (!fence || store.inWrite()) return store.write(fn);
  return store.write(async () => {
    await fence(true);
    return fn();
  });
}

/**
 * For what a scheduled firing's call is about to do outside any transaction
 * (a transaction: false method: a text message, a model's answer): throws
 * unless the firing is still this instance's, renewing its lease as it looks.
 * It marks nothing: what is sent afterwards cannot commit with a mark, so a
 * takeover after it and before the firing's next write runs the firing again.
 */
export async function stillHeld(store: Store, call: Call): Promise<void> {
  const fence = call.root.fence;
  if (!fence || store.inWrite()) return;
  await store.write(() => fence(false));
}

/** Waits for the writes the call left running, so they commit with it or fail it. */
export async function finished(call: Call): Promise<void> {
  const pending = call.pending;
  if (!pending) return;
  call.pending = undefined;
  await Promise.all(pending);
}

export function newCall(caller: Caller, o: { id?: string; parent?: Call | null; hint?: unknown; surface?: string } = {}): Call {
  const parent = o.parent ?? null;
  const id = parent ? `${parent.id}.${++parent.nested}` : (o.id ?? crypto.randomUUID());
  const call: Call = { id, caller, parent, root: null as unknown as Call, hint: o.hint, price: 0, plan: null, upstream: { network: 0, cached: 0 }, nested: 0, surface: o.surface };
  (call as { root: Call }).root = parent ? parent.root : call;
  return call;
}

/**
 * A caller with some of its fields changed. A request's caller may read its
 * client's address only when asked (core/http/identify.ts), which a spread
 * alone would not copy: it is read here, so the copy keeps it.
 */
export function changedCaller(caller: Caller, change: Partial<Caller>): Caller {
  return { ...caller, address: caller.address, ...change };
}

/** A nested call's caller, holding at most the scopes of the call it was made from. */
export function narrowed(caller: Caller, parent: Call | null): Caller {
  const outer = parent?.caller.scopes;
  if (!outer || outer === "*") return caller;
  const scopes = caller.scopes === "*" ? outer : caller.scopes.filter((s) => outer.includes(s));
  if (caller.scopes !== "*" && scopes.length === caller.scopes.length) return caller;
  return changedCaller(caller, { scopes });
}
