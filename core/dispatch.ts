// The one call path. HTTP, MCP, the CLI, in-page app calls, event prompts and
// the agent all come through here: identify -> limit -> scope -> price ->
// validate -> run. Each call gets its own state (core/call.ts), made here.
import { HearthError, unauthenticated } from "./errors.ts";
import { limitCall } from "./auth/limits.ts";
import { assertScope } from "./auth/tokens.ts";
import { finished, narrowed, newCall, stillHeld, writeFor, type Call } from "./call.ts";
import type { Caller } from "./plugin.ts";
import type { MethodEntry } from "./registry.ts";
import { systemClock, type Runtime } from "./runtime.ts";
import { validateArgs } from "./validate.ts";
import { gate, refund, unspent } from "./policy/gate.ts";
import type { Ended } from "./audit/log.ts";
import { Lastly } from "./db/store.ts";

export interface CallInput {
  service: string;
  method: string;
  args: Record<string, unknown>;
  caller: Caller;
  /** For an outermost call, the id the server gave the request it answers (never one a client sent); absent, one is made. */
  requestId?: string;
  /** The call this one is made from: the new call's id extends its, its scopes bound the new call's, and limits count against its outermost caller. */
  parent?: Call;
  /** What the starter tells the handler about how it was started (see Call.hint). */
  hint?: unknown;
  /** The HTTP verb, when the call came over HTTP: GET may not reach a write. */
  verb?: string;
  baseUrl?: string;
  /** The method's entry, when the surface has already looked it up for these service and method. */
  entry?: MethodEntry;
  /** Where the call came in (http, mcp, page, event, ...): what the audit log says. Nested calls say "agent" or "nested". */
  surface?: string;
  /** How to ask the person at the client, when the surface can (see Call.ask). */
  ask?: Call["ask"];
  /** The client is asked in the answer and calls again with the reply (see Call.roundTrip). */
  roundTrip?: Call["roundTrip"];
}

/**
 * What the audit log is told of a call while it runs, and once it ends its
 * entry itself (the one object a call's entry takes, made as it starts;
 * its call is set once run() has made it, null before); `logged` says
 * whether that entry is already in the call's transaction.
 */
interface Audited extends Ended {
  logged: boolean;
}

/** The time now in ms: the system's read without a Date made for it. */
const nowMs = (rt: Runtime) => (rt.clock === systemClock ? Date.now() : rt.clock.now().getTime());

function surfaceOf(input: CallInput, caller: Caller, parent: Call | null): string {
  if (input.surface) return input.surface;
  if (caller.agent) return "agent";
  if (!parent) return "local";
  // A call a surface made for itself outside dispatch (a DAV request) lends its surface to the calls made from it; dispatch's own calls never carry one.
  return parent.surface ?? "nested";
}

export function lookup(rt: Runtime, service: string, method: string): MethodEntry {
  const entry = rt.registry.get(service, method);
  if (entry) return entry;
  if (!rt.registry.plugins.has(service)) throw new HearthError("not_found", `no service "${service}"`);
  throw new HearthError("not_found", `no method "${method}" in ${service} (it has: ${rt.registry.plugins.get(service)!.methods.map((m) => m.name).join(", ")})`);
}

export function priceOf(entry: MethodEntry, args: Record<string, unknown>, rt: Runtime, caller: Caller): number | Promise<number> {
  const p = entry.def.price ?? 0;
  if (typeof p === "number") return p;
  return p(args, rt.makeCtx(entry.service, "read", newCall(caller, { id: "price" }), entry.name, ""));
}

/**
 * Runs the handler in a context of its own, waits for what it left pending,
 * and gives its answer (null for none). `own`: the call's transaction is its
 * own and nothing is charged in it after the handler, so an answer left to
 * its last statement (Lastly) may be waited on with the COMMIT; dispatch()
 * shapes it once the call has ended.
 */
async function runHandler(rt: Runtime, entry: MethodEntry, kind: "read" | "write", call: Call, args: Record<string, unknown>, baseUrl: string, price: number, own = false): Promise<unknown> {
  const ctx = rt.makeCtx(entry.service, kind, call, entry.name, baseUrl);
  if (price) ctx.price = price;
  let out = await entry.def.run(args, ctx);
  if (out instanceof Lastly && !(own && rt.store.settleAtCommit?.(out))) out = await out.settle();
  if (call.pending) await finished(call);
  return out === undefined ? null : out;
}

/**
 * Runs a call and keeps its entry in the audit log: one entry per call,
 * answered or refused. A write's or a charge's entry was written in its own
 * transaction (see `within` below); any other is held for the next batch.
 */
export async function dispatch(rt: Runtime, input: CallInput): Promise<unknown> {
  const out = await audited(rt, input);
  if (rt.changed) tellChange(rt, input);
  return out instanceof Lastly ? out.settle() : out;
}

/**
 * Tells the person's open pages that a write of theirs went through (core/views
 * listens), once what it wrote is committed: after a nested call, with its
 * outer call's transaction. Not sent with the COMMIT (PostgreSQL's NOTIFY
 * in the write's transaction): a notifying commit takes a lock of the whole
 * cluster's, one at a time, and wakes the listeners once per write, where
 * notices published after their commits go out a few at a time
 * (core/shared/pg.ts); that cost a write on PostgreSQL ~40 µs of the
 * database's CPU (bench/pgstat.ts).
 */
function tellChange(rt: Runtime, input: CallInput) {
  const account = input.caller.account?.id;
  const entry = input.entry ?? rt.registry.get(input.service, input.method);
  if (!account || entry?.def.kind !== "write") return;
  const change = { account, service: input.service, method: input.method };
  const tell = () => rt.changed?.(change);
  if (!rt.store.inWrite()) tell();
  else void rt.store.onCommit(tell);
}

async function audited(rt: Runtime, input: CallInput): Promise<unknown> {
  const audit = rt.audit;
  if (!audit) return run(rt, input, null);
  const a: Audited = { call: null as unknown as Call, surface: "", service: input.service, method: input.method, args: input.args, error: undefined, at: 0, logged: false };
  try {
    const out = await run(rt, input, a);
    if (!a.logged) {
      a.at = nowMs(rt);
      audit.later(a);
    }
    return out;
  } catch (error) {
    // Credits a failed call took from its credential's day go back: the day's spending is what was charged.
    if (a.call?.allowance) await refund(rt, a.call);
    // An entry written inside the call's transaction went with it when it rolled back: the refusal is what is kept.
    const parent = input.parent ?? null;
    const call = a.call ?? newCall(narrowed(input.caller, parent), { id: input.requestId, parent });
    audit.later({ call, surface: a.surface || surfaceOf(input, call.caller, parent), service: input.service, method: input.method, args: input.args, error, at: nowMs(rt) });
    throw error;
  }
}

async function run(rt: Runtime, input: CallInput, a: Audited | null): Promise<unknown> {
  const given = input.entry;
  const entry = given && given.service === input.service && given.name === input.method ? given : lookup(rt, input.service, input.method);
  const def = entry.def;
  const parent = input.parent ?? null;
  const call = newCall(narrowed(input.caller, parent), { id: input.requestId, parent, hint: input.hint });
  if (input.ask) call.ask = input.ask;
  if (input.roundTrip && !parent) call.roundTrip = input.roundTrip;
  const caller = call.caller;
  if (a) {
    a.call = call;
    a.surface = surfaceOf(input, caller, parent);
  }
  // Keeps the entry in the transaction now running, so it commits or rolls back with what the call did.
  const within = async () => {
    if (!a) return;
    a.at = nowMs(rt);
    await rt.audit!.within(a);
    a.logged = true;
  };
  // Every call takes its turn here, over any surface and nested ones too, against whoever started the chain.
  const limited = limitCall(rt, entry, call.root.caller);
  if (limited) await limited;
  if (input.verb === "GET" && def.kind === "write")
    throw new HearthError("method_not_allowed", `${entry.path} changes something: call it with POST and a JSON body`, { headers: { Allow: "POST" } });

  if (def.access === "account" && !caller.account) {
    if (caller.via === "payment") throw new HearthError("forbidden", `${entry.path} needs an account; a payment alone cannot call it`);
    throw unauthenticated(`${entry.path} needs an account: send "Authorization: Bearer <token>"`);
  }
  if (caller.agent && def.withheldFromAgent) throw new HearthError("forbidden", `${entry.path} is withheld from the agent: only a person or a program may call it`);
  if (caller.account || caller.via === "token" || caller.via === "session") assertScope(caller, entry.service);

  const args = validateArgs(entry, input.args);
  // A write that opens no transaction of its own (it waits on the network), made for a scheduled firing: the firing
  // must still be this instance's before anything is asked, held or sent; the check renews its lease as it looks.
  if (def.kind === "write" && def.transaction === false && call.root.fence && !rt.store.inWrite()) await stillHeld(rt.store, call);

  const priced = rt.config.HEARTH_METERING === "off" ? 0 : rt.metering?.price ? rt.metering.price(entry, args, caller) : priceOf(entry, args, rt, caller);
  const price = priced instanceof Promise ? await priced : priced;
  call.price = price;
  // The credential's policy, before anything is held or charged: a call it asks about waits here for the owner.
  const held = gate(rt, entry, args, price, call);
  if (held) await held;
  if (price === 0 && rt.metering?.free) {
    const refused = rt.metering.free(caller, call);
    if (refused) await refused;
  }
  if (price > 0) {
    if (caller.ambient)
      throw new HearthError(
        "forbidden",
        `${entry.path} costs ${price} credit(s): a call resting on the session cookie alone must carry the header X-CSRF-Token (the session's token, from GET /session) or come from this instance's own pages; nothing was charged`,
      );
    if (rt.metering) call.plan = await rt.metering.before({ rt, entry, args, caller, price, baseUrl: input.baseUrl, call });
    else if (!caller.account) throw unauthenticated(`${entry.path} costs ${price} credit(s) per call: send a token`);
  }
  const paid = call.plan !== null;
  // Nothing will be charged (metering took no plan): the day's allowance, which counts what is charged, gets its credits back.
  if (!paid && call.allowance) await refund(rt, call);

  const inWrite = rt.store.inWrite();
  const kind = def.kind === "write" || inWrite ? "write" : "read";
  const baseUrl = input.baseUrl ?? "";
  // Nothing to charge and no transaction to open (a read, most calls): the handler runs here, without the steps below.
  if (!paid && (def.kind !== "write" || def.transaction === false || inWrite)) {
    if (!a || def.kind !== "write") return runHandler(rt, entry, kind, call, args, baseUrl, 0);
    const out = await runHandler(rt, entry, kind, call, args, baseUrl, 0);
    // A write inside another's transaction joins it; one that opens none keeps its entry in a transaction of its own, at once.
    if (inWrite) await within();
    else await rt.store.write(within);
    return out;
  }
  const m = rt.metering;
  const runOnce = async (charge: boolean) => {
    const out = await runHandler(rt, entry, kind, call, args, baseUrl, paid ? price : 0, charge && !paid && !inWrite);
    if (charge && paid) {
      await m?.settle?.(call);
      await m?.commit?.(call);
      await unspent(rt, call);
    }
    if (charge && (paid || def.kind === "write") && rt.store.inWrite()) await within();
    return out;
  };
  let prepaid = false;
  try {
    // An effect that cannot be undone waits for its payment: taken first, the handler runs only once it is.
    if (paid && def.irreversible && m?.prepay) {
      await m.prepay(call);
      prepaid = true;
    }
    // A write outside a transaction whose payment may yet fail after it runs is one transaction with it, undone if it does.
    const whole = def.transaction !== false || (paid && !!m?.unsettled?.(call));
    if (def.kind === "write" && whole && !inWrite) return await writeFor(rt.store, call, () => runOnce(true));
    if (paid && !inWrite) {
      // A read holds no lock while it works (a provider may take seconds); its
      // payment settles after it, and its charge is one short transaction.
      const out = await runOnce(false);
      await m?.settle?.(call);
      await rt.store.write(async () => {
        await m?.commit?.(call);
        await unspent(rt, call);
        await within();
      });
      return out;
    }
    const out = await runOnce(true);
    // A paid call outside a transaction (a write that opens none, settled before it ran): its entry in a transaction of its own.
    if (a && !a.logged) await rt.store.write(within);
    return out;
  } catch (e) {
    if (prepaid) throw (await m?.failed?.(call, e)) ?? e;
    throw e;
  } finally {
    // Only now, once the charge is committed (or the call failed), is what was held for it let go:
    // another instance never sees the balance before the charge without the hold beside it.
    if (paid) rt.metering?.release?.(call);
  }
}
