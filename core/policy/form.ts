// The policy as a person edits it: one choice per class of act, the credit
// amount above which a paid call counts as costing, what happens to sending
// out after reading outside content, and rules for single methods, one a
// line. The same fields serve /token and the OAuth consent page.
import type { Posted } from "../http/pages/form.ts";
import { html, type Html } from "../http/pages/layout.ts";
import { invalid } from "../errors.ts";
import { AFTER_UNTRUSTED, CLASSES, parsePolicy, RULES, type AfterUntrusted, type Policy, type PolicyClass } from "./rules.ts";

const CLASS_WORDS: Record<PolicyClass, string> = {
  read: "Reading (lists, searches, gets)",
  write: "Writing (adds and changes)",
  destructive: "Removing or overwriting",
  outbound: "Sending outside this instance (mail, texts, payments, posts)",
  costs: "Spending credits",
};
const RULE_WORDS: Record<string, string> = { allow: "Allow", ask: "Ask me first", deny: "Refuse" };
const UNTRUSTED_WORDS: Record<AfterUntrusted, string> = {
  ask: "Ask me first (recommended)",
  deny: "Refuse",
  off: "Follow the rules above only",
};

/** The fields of a policy, filled with `p`. */
export function policyFields(p: Policy, legend = "What it may do"): Html {
  const lines = Object.entries(p.methods)
    .map(([m, r]) => `${m} ${r}`)
    .join("\n");
  return html`<fieldset class="policy">
<legend>${legend}</legend>
<p class="hint">For each kind of call: allow it, ask you first (the call waits until you approve it on the Approvals page), or refuse it. A call that is of several kinds follows the strictest.</p>
${CLASSES.map(
  (c) => html`<label for="policy-${c}">${CLASS_WORDS[c]}</label>
<select id="policy-${c}" name="policy_${c}">${RULES.map((r) => html`<option value="${r}" ${p.classes[c] === r ? html`selected` : ""}>${RULE_WORDS[r]}</option>`)}</select>`,
)}
<label for="policy-costs-above">Spending counts above this many credits a call</label>
<input type="text" inputmode="numeric" id="policy-costs-above" name="policy_costs_above" value="${String(p.costsAbove)}" aria-describedby="policy-costs-hint">
<p class="hint" id="policy-costs-hint">A call priced at or below it is not held to the spending rule (a credit is one cent).</p>
<label for="policy-untrusted">Sending out after reading someone else's content</label>
<select id="policy-untrusted" name="policy_untrusted" aria-describedby="policy-untrusted-hint">${AFTER_UNTRUSTED.map((u) => html`<option value="${u}" ${p.untrusted === u ? html`selected` : ""}>${UNTRUSTED_WORDS[u]}</option>`)}</select>
<p class="hint" id="policy-untrusted-hint">Mail from others, fetched pages and feeds can carry instructions meant for an agent.</p>
<label for="policy-credits">Credits it may spend a day</label>
<input type="text" inputmode="numeric" id="policy-credits" name="policy_credits_per_day" value="${p.creditsPerDay === null ? "" : String(p.creditsPerDay)}" aria-describedby="policy-credits-hint">
<p class="hint" id="policy-credits-hint">Empty for no limit. Counted per UTC day.</p>
<label for="policy-usdc">USDC its wallet may pay a day</label>
<input type="text" inputmode="decimal" id="policy-usdc" name="policy_usdc_per_day" value="${p.usdcPerDay ?? ""}" aria-describedby="policy-usdc-hint">
<p class="hint" id="policy-usdc-hint">For wallet/pay, in dollars, as in 1.50. Empty for no limit beyond the wallet's own caps.</p>
<label for="policy-recipients">It sends only to</label>
<textarea id="policy-recipients" name="policy_recipients" rows="2" aria-describedby="policy-recipients-hint">${(p.recipients ?? []).join("\n")}</textarea>
<p class="hint" id="policy-recipients-hint">Addresses, numbers or wallet servers, one a line; empty for anywhere.</p>
<label for="policy-over">Past a limit</label>
<select id="policy-over" name="policy_over_limit">${(["deny", "ask"] as const).map((v) => html`<option value="${v}" ${p.overLimit === v ? html`selected` : ""}>${v === "ask" ? "Ask me first" : "Refuse"}</option>`)}</select>
<label for="policy-methods">Rules for single methods</label>
<textarea id="policy-methods" name="policy_methods" rows="3" aria-describedby="policy-methods-hint">${lines}</textarea>
<p class="hint" id="policy-methods-hint">One a line, a method and allow, ask or deny, as in <code>notes/delete deny</code>. These override the choices above.</p>
</fieldset>`;
}

/** The policy a page's form (or a program's JSON "policy") posted; what it leaves out is `base`'s. */
export function postedPolicy(posted: Posted, methods: Set<string>, base: Policy): Policy {
  if (posted.json) {
    const raw = posted.value("policy");
    return raw === undefined ? base : parsePolicy(raw, methods, base);
  }
  const classes: Record<string, string> = {};
  for (const c of CLASSES) {
    const v = posted.get(`policy_${c}`);
    if (v !== undefined) classes[c] = v;
  }
  const raw: Record<string, unknown> = { classes };
  const above = posted.get("policy_costs_above");
  if (above !== undefined) raw.costsAbove = above.trim() === "" ? String(base.costsAbove) : above;
  const untrusted = posted.get("policy_untrusted");
  if (untrusted !== undefined) raw.untrusted = untrusted;
  const credits = posted.get("policy_credits_per_day");
  if (credits !== undefined) raw.creditsPerDay = credits.trim() === "" ? null : credits.trim();
  const usdc = posted.get("policy_usdc_per_day");
  if (usdc !== undefined) raw.usdcPerDay = usdc.trim() === "" ? null : usdc.trim().replace(/^\$/, "");
  const recipients = posted.get("policy_recipients");
  if (recipients !== undefined) {
    const list = recipients.split(/[\r\n,]+/).map((x) => x.trim()).filter(Boolean);
    raw.recipients = list.length ? list : null;
  }
  const over = posted.get("policy_over_limit");
  if (over !== undefined) raw.overLimit = over;
  const text = posted.get("policy_methods");
  if (text !== undefined) {
    const m: Record<string, string> = {};
    for (const line of text.split(/\r?\n/)) {
      const t = line.trim();
      if (!t) continue;
      const [path, rule, ...rest] = t.split(/[\s:=]+/);
      if (!rule || rest.length) throw invalid("policy.methods", `"${t}" is not a method and a rule, as in "notes/delete deny"`);
      m[path] = rule;
    }
    raw.methods = m;
  }
  return parsePolicy(raw, methods, base);
}

/** A little style the fields need beyond the page's own. */
export const POLICY_STYLE = html`<style>textarea{width:100%;max-width:28rem;font:inherit;padding:.6rem .7rem;border:1px solid var(--muted);border-radius:.4rem;background:var(--field);color:var(--fg)}
textarea:focus-visible{outline:3px solid var(--accent);outline-offset:2px}</style>`;
