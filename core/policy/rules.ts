// A credential's policy: for each class of act a method declares (read,
// write, destructive, outbound, costs) and for any one method, whether a call
// runs (allow), waits for the owner (ask) or is refused (deny). A method's own
// rule overrides its classes; otherwise the strictest rule among its classes
// holds, so a write that also sends out asks if either says ask.
import { invalid } from "../errors.ts";
import type { MethodEntry } from "../registry.ts";

export type Rule = "allow" | "ask" | "deny";
export const RULES: readonly Rule[] = ["allow", "ask", "deny"];
export const CLASSES = ["read", "write", "destructive", "outbound", "costs"] as const;
export type PolicyClass = (typeof CLASSES)[number];

/** What an agent run or session that has read outside content may do about sending out: ask the owner, be refused, or follow the policy alone. */
export type AfterUntrusted = "ask" | "deny" | "off";
export const AFTER_UNTRUSTED: readonly AfterUntrusted[] = ["ask", "deny", "off"];

export interface Policy {
  classes: Record<PolicyClass, Rule>;
  /** A call priced at this many credits or fewer is not held to the costs rule. */
  costsAbove: number;
  /** Rules for single methods, by path ("service/method"): they override the classes. */
  methods: Record<string, Rule>;
  untrusted: AfterUntrusted;
  /** Credits its calls may spend in a UTC day; null for no limit. */
  creditsPerDay: number | null;
  /** USDC its wallet/pay calls may pay out in a UTC day, as a decimal ("1.50"); null for no limit. */
  usdcPerDay: string | null;
  /** Where its sends may go (addresses, numbers, servers), for methods that name a recipient; null for anywhere. */
  recipients: string[] | null;
  /** What a call past a limit (the day's credits, a recipient not listed) gets: the owner asked, or a refusal. */
  overLimit: "ask" | "deny";
}

/** A credential with no policy of its own: everything its scope reaches runs, and sending out after reading outside content asks. */
export const OPEN: Policy = {
  classes: { read: "allow", write: "allow", destructive: "allow", outbound: "allow", costs: "allow" },
  costsAbove: 0,
  methods: {},
  untrusted: "ask",
  creditsPerDay: null,
  usdcPerDay: null,
  recipients: null,
  overLimit: "deny",
};

/** What a new OAuth grant starts with: reads and writes run; removing, sending out and spending more than a little ask. */
export const GRANT_DEFAULT: Policy = {
  classes: { read: "allow", write: "allow", destructive: "ask", outbound: "ask", costs: "ask" },
  costsAbove: 10,
  methods: {},
  untrusted: "ask",
  creditsPerDay: null,
  usdcPerDay: null,
  recipients: null,
  overLimit: "ask",
};

const STRICT: Record<Rule, number> = { allow: 0, ask: 1, deny: 2 };
const stricter = (a: Rule, b: Rule): Rule => (STRICT[b] > STRICT[a] ? b : a);

export interface Decision {
  rule: Rule;
  /** In plain words, which rule decided: shown to the owner and in refusals. */
  why: string;
}

/** What the policy says about one call of entry at this price. */
export function decide(policy: Policy, entry: MethodEntry, price: number): Decision {
  const own = policy.methods[entry.path];
  if (own) return { rule: own, why: `this credential's rule for ${entry.path} is "${own}"` };
  const kind: PolicyClass = entry.def.kind === "write" ? "write" : "read";
  let rule = policy.classes[kind];
  let by: string = kind === "write" ? "writes" : "reads";
  const consider = (c: PolicyClass, words: string) => {
    const r = policy.classes[c];
    if (STRICT[r] > STRICT[rule]) (rule = stricter(rule, r)), (by = words);
  };
  if (entry.classes.destructive) consider("destructive", "methods that remove or overwrite");
  if (entry.classes.outbound) consider("outbound", "methods that send outside this instance");
  if (entry.classes.costs && price > policy.costsAbove) consider("costs", `calls costing more than ${policy.costsAbove} credit(s)`);
  return { rule, why: `this credential's rule for ${by} is "${rule}"` };
}

/** An amount of USDC as a person writes it: whole dollars and at most six decimals (the token's own). */
const USDC = /^\d{1,9}(\.\d{1,6})?$/;
/** The amount without leading zeros or trailing decimal zeros: "01.50" is "1.5". */
const usdcText = (t: string) => t.replace(/^0+(?=\d)/, "").replace(/(\.\d*?)0+$/, "$1").replace(/\.$/, "");

/** An amount of USDC in the token's smallest units (6 decimals). */
export function usdcAtomic(t: string, decimals = 6): bigint {
  const [whole, frac = ""] = t.split(".");
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt((frac + "0".repeat(decimals)).slice(0, decimals) || "0");
}

const isRule = (v: unknown): v is Rule => typeof v === "string" && (RULES as readonly string[]).includes(v);

/** Reads a policy a person or program sent (or the store kept), refusing by field what is not one; what it leaves out is the `base`'s. */
export function parsePolicy(raw: unknown, methods: Set<string>, base: Policy = OPEN): Policy {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw invalid("policy", "policy is an object: { classes: { read, write, destructive, outbound, costs }, costsAbove, methods, untrusted }");
  const r = raw as Record<string, unknown>;
  const out: Policy = { ...base, classes: { ...base.classes }, methods: { ...base.methods }, recipients: base.recipients && [...base.recipients] };
  if (r.classes !== undefined) {
    if (r.classes === null || typeof r.classes !== "object") throw invalid("policy.classes", `classes maps ${CLASSES.join(", ")} to allow, ask or deny`);
    for (const [k, v] of Object.entries(r.classes as Record<string, unknown>)) {
      if (!(CLASSES as readonly string[]).includes(k)) throw invalid(`policy.classes.${k}`, `no class "${k}" (classes are: ${CLASSES.join(", ")})`);
      if (!isRule(v)) throw invalid(`policy.classes.${k}`, `${k} is allow, ask or deny (got ${JSON.stringify(v)})`);
      out.classes[k as PolicyClass] = v;
    }
  }
  if (r.costsAbove !== undefined) {
    const n = typeof r.costsAbove === "string" && r.costsAbove.trim() !== "" ? Number(r.costsAbove) : r.costsAbove;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > 1_000_000) throw invalid("policy.costsAbove", "costsAbove is a whole number of credits from 0 to 1000000");
    out.costsAbove = n;
  }
  if (r.methods !== undefined) {
    if (r.methods === null || typeof r.methods !== "object" || Array.isArray(r.methods)) throw invalid("policy.methods", 'methods maps a method\'s path ("service/method") to allow, ask or deny');
    out.methods = {};
    for (const [k, v] of Object.entries(r.methods as Record<string, unknown>)) {
      if (!methods.has(k)) throw invalid(`policy.methods`, `no method "${k}" on this instance`);
      if (v === "" || v === null || v === "class") continue;
      if (!isRule(v)) throw invalid(`policy.methods`, `the rule for ${k} is allow, ask or deny (got ${JSON.stringify(v)})`);
      out.methods[k] = v;
    }
  }
  if (r.untrusted !== undefined) {
    if (typeof r.untrusted !== "string" || !(AFTER_UNTRUSTED as readonly string[]).includes(r.untrusted)) throw invalid("policy.untrusted", "untrusted is ask, deny or off");
    out.untrusted = r.untrusted as AfterUntrusted;
  }
  if (r.creditsPerDay !== undefined) {
    const v = r.creditsPerDay;
    const n = v === null || v === "" ? null : typeof v === "string" ? Number(v) : v;
    if (n !== null && (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > 100_000_000)) throw invalid("policy.creditsPerDay", "creditsPerDay is a whole number of credits (or null for no limit)");
    out.creditsPerDay = n as number | null;
  }
  if (r.usdcPerDay !== undefined) {
    const v = r.usdcPerDay;
    const t = v === null ? "" : typeof v === "number" ? String(v) : v;
    if (typeof t !== "string" || (t.trim() !== "" && !USDC.test(t.trim())))
      throw invalid("policy.usdcPerDay", 'usdcPerDay is an amount of USDC with at most 6 decimals, like "1.50" (or null for no limit)');
    out.usdcPerDay = t.trim() === "" ? null : usdcText(t.trim());
  }
  if (r.recipients !== undefined) {
    const v = r.recipients;
    if (v !== null && (!Array.isArray(v) || v.some((x) => typeof x !== "string") || v.length > 500))
      throw invalid("policy.recipients", "recipients is a list of addresses, numbers or servers (or null for anywhere)");
    out.recipients = v === null ? null : [...new Set((v as string[]).map((x) => x.trim().toLowerCase()).filter(Boolean))];
  }
  if (r.overLimit !== undefined) {
    if (r.overLimit !== "ask" && r.overLimit !== "deny") throw invalid("policy.overLimit", "overLimit is ask or deny");
    out.overLimit = r.overLimit;
  }
  return out;
}

/** A kept policy, read back leniently: a method since removed is dropped, anything unreadable is the open policy. */
export function storedPolicy(text: string): Policy {
  try {
    const v = JSON.parse(text) as Partial<Policy>;
    return {
      classes: { ...OPEN.classes, ...Object.fromEntries(Object.entries(v.classes ?? {}).filter(([, r]) => isRule(r))) },
      costsAbove: typeof v.costsAbove === "number" ? v.costsAbove : OPEN.costsAbove,
      methods: Object.fromEntries(Object.entries(v.methods ?? {}).filter(([, r]) => isRule(r))),
      untrusted: (AFTER_UNTRUSTED as readonly string[]).includes(v.untrusted as string) ? (v.untrusted as AfterUntrusted) : "ask",
      creditsPerDay: typeof v.creditsPerDay === "number" ? v.creditsPerDay : null,
      usdcPerDay: typeof v.usdcPerDay === "string" && USDC.test(v.usdcPerDay) ? v.usdcPerDay : null,
      recipients: Array.isArray(v.recipients) ? v.recipients.filter((x) => typeof x === "string") : null,
      overLimit: v.overLimit === "ask" ? "ask" : "deny",
    };
  } catch {
    return OPEN;
  }
}

const SHORT: Record<PolicyClass, string> = { read: "reading", write: "writing", destructive: "removing", outbound: "sending out", costs: "spending" };

/** The policy in a few words, for the tokens page. */
export function policySummary(p: Policy): string {
  const asks = CLASSES.filter((c) => p.classes[c] === "ask");
  const denies = CLASSES.filter((c) => p.classes[c] === "deny");
  const parts: string[] = [];
  const label = (c: PolicyClass) => (c === "costs" ? `spending over ${p.costsAbove} credit${p.costsAbove === 1 ? "" : "s"}` : SHORT[c]);
  if (asks.length) parts.push(`asks before ${asks.map(label).join(", ")}`);
  if (denies.length) parts.push(`refuses ${denies.map(label).join(", ")}`);
  if (p.creditsPerDay !== null) parts.push(`at most ${p.creditsPerDay} credits a day`);
  if (p.usdcPerDay !== null) parts.push(`pays at most ${p.usdcPerDay} USDC a day`);
  if (p.recipients) parts.push(`sends only to ${p.recipients.length} listed`);
  const own = Object.keys(p.methods).length;
  if (own) parts.push(`${own} method rule${own === 1 ? "" : "s"}`);
  return parts.length ? parts.join("; ") : "runs everything in scope";
}
