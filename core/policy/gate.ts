// The policy's place in the one call path: dispatch asks here, once a call is
// validated and priced and before anything is held or charged for it. Most
// calls pass at once (a session is the owner; a token with no policy of its
// own runs what its scope reaches); a rule of "deny" refuses, one of "ask"
// waits for the owner (core/policy/approvals.ts). A call made for a run that
// has read outside content and that sends out asks as well, whatever the
// policy, unless the credential's owner turned that off.
import type { Call } from "../call.ts";
import { HearthError } from "../errors.ts";
import type { MethodEntry } from "../registry.ts";
import type { Runtime } from "../runtime.ts";
import { servedFromCache } from "../upstream/index.ts";
import { decide, type Decision } from "./rules.ts";
import type { Resolved } from "./store.ts";

/** Why a call after reading outside content asks, in the words the agent and its owner have always seen. */
export const AFTER_READING = "sending out needs the owner's approval after reading outside content";

export function gate(rt: Runtime, entry: MethodEntry, args: Record<string, unknown>, price: number, call: Call): void | Promise<void> {
  const policies = rt.policies;
  const caller = call.caller;
  if (!policies || !caller.account) return;
  const tainted = caller.untrustedRead !== undefined && entry.classes.outbound;
  if (caller.via !== "token" && !tainted) return;
  const r = policies.of(caller);
  if (r instanceof Promise) return r.then((r) => judge(rt, r, entry, args, price, call, tainted));
  if (!r.own && !tainted) return;
  return judge(rt, r, entry, args, price, call, tainted);
}

/** Where a call sends, by its method's recipient argument, as the allowlist compares them. */
function recipientsOf(entry: MethodEntry, args: Record<string, unknown>): string[] {
  const name = entry.def.recipient;
  if (!name) return [];
  const v = args[name] ?? (entry.def.args.properties[name] as { default?: unknown } | undefined)?.default;
  const list = Array.isArray(v) ? v : v === undefined || v === null ? [] : [v];
  return list.map((x) => String(x).trim().toLowerCase());
}

/** A limit passed: refused, or (as the policy says) a reason to ask the owner. */
function overLimit(r: Resolved, entry: MethodEntry, why: string): string {
  if (r.policy.overLimit === "ask") return why;
  throw new HearthError("forbidden", `${entry.path} is refused: ${why}; nothing was done or charged. The owner can change it on /token.`, { extra: { policy: "limit" } });
}

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function judge(rt: Runtime, r: Resolved, entry: MethodEntry, args: Record<string, unknown>, price: number, call: Call, tainted: boolean): void | Promise<void> {
  const d: Decision = r.own ? decide(r.policy, entry, price) : { rule: "allow", why: "" };
  if (d.rule === "deny") throw new HearthError("forbidden", `${entry.path} is refused by ${d.why.replace(/^this/, "this")}; nothing was done. The owner can change it on /token.`, { extra: { policy: "deny" } });
  let reason = d.rule === "ask" ? d.why : "";
  const p = r.policy;
  if (r.own && p.recipients && entry.classes.outbound) {
    const allowed = new Set(p.recipients);
    const outside = recipientsOf(entry, args).filter((x) => !allowed.has(x));
    if (outside.length) {
      const why = `this credential sends only to the recipients its owner listed, and ${outside.join(", ")} is not one`;
      const ask = overLimit(r, entry, why);
      reason = reason ? `${reason}; and ${ask}` : ask;
    }
  }
  const limited = r.own && p.creditsPerDay !== null && price > 0 && r.credential ? { credential: r.credential, limit: p.creditsPerDay } : null;
  if (limited) {
    const day = utcDay(rt.clock.now().getTime());
    return rt.policies!.reserve(limited.credential, day, price, limited.limit).then((fits) => {
      if (fits) call.allowance = { credential: limited.credential, day, credits: price };
      else {
        const why = `this call's ${price} credit(s) would take this credential past its ${limited.limit} credits for today (UTC)`;
        const ask = overLimit(r, entry, why);
        reason = reason ? `${reason}; and ${ask}` : ask;
      }
      return held(rt, r, entry, args, price, call, tainted, reason);
    });
  }
  return held(rt, r, entry, args, price, call, tainted, reason);
}

function held(rt: Runtime, r: Resolved, entry: MethodEntry, args: Record<string, unknown>, price: number, call: Call, tainted: boolean, reason: string): void | Promise<void> {
  if (tainted && r.policy.untrusted !== "off") {
    const read = call.caller.untrustedRead;
    const why = `${AFTER_READING}: this run has read ${read}, which may carry someone else's instructions`;
    if (r.policy.untrusted === "deny")
      throw new HearthError("forbidden", `${why}; this credential refuses such sends, so nothing was done`, { extra: { approval: "needed" } });
    reason = reason ? `${why}; and ${reason}` : why;
  }
  if (!reason) return;
  const waited = rt.approvals!.wait({ entry, args, price, caller: call.caller, credential: r.credential, reason, ask: call.root.ask ?? call.ask, roundTrip: call.roundTrip }, call).then((by) => {
    call.approvedBy = by;
  });
  // Declined or unanswered: what was taken from the day's allowance goes back.
  return call.allowance ? waited.catch((e) => refund(rt, call).then(() => Promise.reject(e))) : waited;
}

/** Gives back a failed call's credits to its credential's day (dispatch calls it when a call fails). */
export async function refund(rt: Runtime, call: Call): Promise<void> {
  const a = call.allowance;
  if (!a) return;
  call.allowance = undefined;
  await rt.policies?.release(a.credential, a.day, a.credits);
}

/**
 * Inside the transaction that charges a call: an answer from cache is not
 * charged, so what it took from the day goes back with the charge it did not
 * make. Forgotten only once that commits; rolled back, the failed call's
 * refund gives it back instead.
 */
export async function unspent(rt: Runtime, call: Call): Promise<void> {
  const a = call.allowance;
  if (!a || !servedFromCache(call)) return;
  await rt.policies?.release(a.credential, a.day, a.credits);
  await rt.store.onCommit(() => {
    if (call.allowance === a) call.allowance = undefined;
  });
}
