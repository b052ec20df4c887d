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

function judge(rt: Runtime, r: Resolved, entry: MethodEntry, args: Record<string, unknown>, price: number, call: Call, tainted: boolean): void | Promise<void> {
  const d: Decision = r.own ? decide(r.policy, entry, price) : { rule: "allow", why: "" };
  if (d.rule === "deny") throw new HearthError("forbidden", `${entry.path} is refused by ${d.why.replace(/^this/, "this")}; nothing was done. The owner can change it on /token.`, { extra: { policy: "deny" } });
  let reason = d.rule === "ask" ? d.why : "";
  if (tainted && r.policy.untrusted !== "off") {
    const read = call.caller.untrustedRead;
    const why = `${AFTER_READING}: this run has read ${read}, which may carry someone else's instructions`;
    if (r.policy.untrusted === "deny")
      throw new HearthError("forbidden", `${why}; this credential refuses such sends, so nothing was done`, { extra: { approval: "needed" } });
    reason = reason ? `${why}; and ${reason}` : why;
  }
  if (!reason) return;
  return rt.approvals!.wait({ entry, args, price, caller: call.caller, credential: r.credential, reason, ask: call.root.ask ?? call.ask }, call).then((by) => {
    call.approvedBy = by;
  });
}
