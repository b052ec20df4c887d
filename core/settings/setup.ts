// /setup: the first run. With no account yet it sends the owner to make
// the admin account (sign-up makes the first account the admin and comes
// back here); then the admin chooses the few things that matter — the
// instance's name, its public address, time zone and who may sign up — and,
// if they want, a mail domain, an AI provider (with a test) and x402
// payments. Saved to the settings file as /settings saves, so it can be run
// again or changed there later.
import { parseEnv } from "node:util";
import { hasAccounts } from "../auth/people.ts";
import type { Session } from "../auth/sessions.ts";
import { settingsFile } from "../config.ts";
import { asHearthError, invalid } from "../errors.ts";
import { jsonResponse } from "../http/respond.ts";
import { html, message, page, seeOther, type Html } from "../http/pages/layout.ts";
import type { Runtime } from "../runtime.ts";
import { adminPost, adminSession, refusal, rid } from "./admin.ts";
import { catalog } from "./catalog.ts";
import { readSettingsText } from "./file.ts";
import { changesOf, saveSettings } from "./page.ts";
import { PROBES, type ProbeResult } from "./probes.ts";

/** What the first run asks, in order; the optional ones are grouped apart. */
const MAIN = ["HEARTH_NAME", "HEARTH_PUBLIC_URL", "HEARTH_TZ", "HEARTH_SIGNUP"];
const OPTIONAL = ["MAIL_DOMAIN", "AI_BASE_URL", "AI_API_KEY", "AI_MODEL", "X402_PAY_TO", "X402_NETWORK"];

/** The chains the first run offers for x402 payments (USDC on each is known, core/pay/networks.ts); others are set on /settings. */
export const X402_NETWORKS: [string, string][] = [
  ["eip155:8453", "Base"],
  ["eip155:84532", "Base Sepolia (test network: no real money)"],
];

/** Whether the admin has been through the first run: it always writes the sign-up policy to the settings file. */
export function setupDone(rt: Runtime): boolean {
  return "HEARTH_SIGNUP" in parseEnv(readSettingsText(settingsFile(rt.config)));
}

const SIGNUP: [string, string][] = [
  ["invite", "By invitation: you make a link for each person (recommended)"],
  ["open", "Open: anyone who can reach this address may make an account"],
  ["closed", "Closed: only you, from the command line"],
];

interface View {
  error?: { field?: string; message: string };
  probe?: ProbeResult;
  typed?: Record<string, string>;
  status?: number;
}

function setupForm(rt: Runtime, req: Request, s: Session, v: View): Html {
  const info = new Map(catalog(rt.registry).map((x) => [x.name, x]));
  const val = (n: string) => v.typed?.[n] ?? rt.config[n] ?? "";
  const err = (n: string) => (v.error?.field === n ? html`<span id="f-${n}-error" class="field-error">${v.error.message}</span>` : "");
  const desc = (n: string) => html`aria-describedby="f-${n}-hint${v.error?.field === n ? ` f-${n}-error` : ""}"${v.error?.field === n ? html` aria-invalid="true"` : ""}`;
  const text = (n: string, label: string, hint: string, o: { placeholder?: string; type?: string; list?: string } = {}) => html`<label for="f-${n}">${label}</label>${err(n)}
<input type="${o.type ?? "text"}" id="f-${n}" name="${n}" ${o.type === "password" ? "" : html`value="${val(n)}"`} ${desc(n)}${o.placeholder ? html` placeholder="${o.placeholder}"` : ""}${o.list ? html` list="${o.list}"` : ""} spellcheck="false"${o.type === "password" ? html` autocomplete="new-password"` : ""}>
<p id="f-${n}-hint" class="hint">${hint}</p>`;
  const origin = new URL(req.url).origin;
  const policy = v.typed?.HEARTH_SIGNUP ?? rt.config.HEARTH_SIGNUP ?? "invite";
  const zones = Intl.supportedValuesOf("timeZone");
  return html`<form method="post" action="/setup" novalidate>
<input type="hidden" name="csrf" value="${s.csrf}">
${text("HEARTH_NAME", "Name of this instance", "What its home page greets people with.")}
${text("HEARTH_PUBLIC_URL", "Public address", `The address people and apps reach it at, with https:// behind a proxy; links in answers and invitations use it. This page was opened at ${origin}.`, { placeholder: origin })}
${text("HEARTH_TZ", "Time zone", `Where the people it serves live, as Europe/London; repeating events keep their local time across daylight-saving changes. Type to pick from the list.`, { list: "zones" })}
<datalist id="zones">${zones.map((z) => html`<option value="${z}"></option>`)}</datalist>
<fieldset><legend>Who may make an account</legend>${err("HEARTH_SIGNUP")}
${SIGNUP.map(([value, label]) => html`<label class="choice"><input type="radio" name="HEARTH_SIGNUP" value="${value}"${policy === value ? html` checked` : ""}> ${label}</label>`)}
</fieldset>
<h2>If you want them now</h2>
<p class="hint">Each can be set later on the <a href="/settings">settings</a> page.</p>
${text("MAIL_DOMAIN", "Mail domain", info.get("MAIL_DOMAIN")?.description ?? "", { placeholder: "example.org" })}
<fieldset><legend>AI provider</legend>
${v.probe ? html`<p class="${v.probe.ok ? "notice" : "alert"}" role="${v.probe.ok ? "status" : "alert"}">${v.probe.ok ? "Works: " : "Does not work: "}${v.probe.said}</p>` : ""}
${text("AI_BASE_URL", "API address", "An OpenAI-compatible API with its /v1: https://api.openai.com/v1, https://openrouter.ai/api/v1, or a local llama.cpp, vLLM or Ollama server. Empty: Ollama on this machine, when it runs.", { placeholder: "https://api.openai.com/v1" })}
${text("AI_API_KEY", "API key", rt.config.AI_API_KEY ? "A key is set: type a new one to replace it." : "Empty for local servers that need none.", { type: "password" })}
${text("AI_MODEL", "Model", "The chat model for text methods, titles and the agent (gpt-4o-mini, llama3.2, ...).")}
<p><button class="quiet" type="submit" name="test" value="ai">${PROBES.ai.label}</button></p>
</fieldset>
<fieldset><legend>x402 payments</legend>
${text("X402_PAY_TO", "Address paid by callers without an account", info.get("X402_PAY_TO")?.description ?? "", { placeholder: "0x…" })}
<label for="f-X402_NETWORK">Network</label>${err("X402_NETWORK")}
<select id="f-X402_NETWORK" name="X402_NETWORK" ${desc("X402_NETWORK")}>${networks(val("X402_NETWORK")).map(([id, label]) => html`<option value="${id}"${id === val("X402_NETWORK") ? html` selected` : ""}>${label}</option>`)}</select>
<p id="f-X402_NETWORK-hint" class="hint">The chain payments in USDC are taken on. Try it on Base Sepolia first; other chains are set on the <a href="/settings#g-payments-and-x402">settings</a> page.</p>
</fieldset>
<p><button type="submit">Save and finish</button></p>
</form>`;
}

/** The offered chains, and the one set now when it is another (so saving the page does not change it). */
const networks = (current: string): [string, string][] => (!current || X402_NETWORKS.some(([id]) => id === current) ? X402_NETWORKS : [...X402_NETWORKS, [current, `${current} (set now)`]]);

async function setupPage(rt: Runtime, req: Request, s: Session, v: View = {}): Promise<Response> {
  const file = settingsFile(rt.config);
  const body = html`<p>A few choices for ${rt.config.HEARTH_NAME || "this instance"}, saved to <code>${file}</code>; everything else has a sensible default and its place on the <a href="/settings">settings</a> page.</p>
${v.error && !v.error.field ? message("alert", v.error.message) : v.error ? message("alert", `Not saved: ${v.error.field}: ${v.error.message}`) : ""}
${setupForm(rt, req, s, v)}`;
  return page({ title: "Set up this instance", body, account: s.account, csrf: s.csrf, status: v.status, head: STYLE, path: "/setup" });
}

const STYLE = html`<style>.field-error{display:block;color:var(--bad);font-weight:600;margin:.2rem 0}input[aria-invalid=true]{border-color:var(--bad);border-width:2px}</style>`;

export async function setupGet(rt: Runtime, req: Request): Promise<Response> {
  // No account yet: the first one made is the admin's, and sign-up brings it back here.
  if (!(await hasAccounts(rt.store))) return seeOther("/signup");
  const s = await adminSession(rt, req);
  if (s instanceof Response) return s;
  return setupPage(rt, req, s);
}

export async function setupPost(rt: Runtime, req: Request): Promise<Response> {
  const got = await adminPost(rt, req);
  if (got instanceof Response) return got;
  const { s, posted } = got;
  const names = [...MAIN, ...OPTIONAL];
  const typed = () => Object.fromEntries(names.filter((n) => n !== "AI_API_KEY" && posted.get(n) !== undefined).map((n) => [n, posted.get(n)!]));
  try {
    const { changes, merged } = changesOf(rt, posted, names);
    if (posted.get("test") === "ai") {
      const result = await PROBES.ai.run(merged);
      if (posted.json) return jsonResponse(200, { result }, rid());
      return setupPage(rt, req, s, { probe: result, typed: typed() });
    }
    const network = posted.get("X402_NETWORK");
    if (network !== undefined && !networks(rt.config.X402_NETWORK ?? "").some(([id]) => id === network.trim()))
      throw invalid("X402_NETWORK", `choose ${X402_NETWORKS.map(([id, label]) => `${label.split(" (")[0]} (${id})`).join(" or ")}; other chains are set on the settings page`);
    const policy = merged.HEARTH_SIGNUP || "invite";
    if (!["open", "invite", "closed"].includes(policy)) throw invalid("HEARTH_SIGNUP", "choose who may make an account");
    // The policy is always written, even when it is the default: it marks the first run as done.
    if (!("HEARTH_SIGNUP" in changes)) changes.HEARTH_SIGNUP = policy;
    const applied = saveSettings(rt, changes);
    rt.log.info("first run saved", { account: s.account.id, settings: Object.keys(changes).join(",") });
    if (posted.json) return jsonResponse(200, { result: { saved: Object.keys(changes), applied: applied.live, restart: applied.restart } }, rid());
    return seeOther("/?setup=done");
  } catch (e) {
    const err = asHearthError(e);
    if (posted.json || err.status === 401 || err.status === 403) return refusal(err, posted.json, s, "/setup");
    return setupPage(rt, req, s, { error: { field: err.field, message: err.message }, typed: typed(), status: err.status });
  }
}
