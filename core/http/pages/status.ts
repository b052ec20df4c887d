// {base}/status: the version, how long the instance has run, and which
// providers and optional integrations are configured and answer. Settings
// are reported as set or not, never their values; provider addresses, and
// whether each answers, are for signed-in admins only (an override may name
// a machine on the home network, and a page anyone may open must not make
// the instance reach out to every provider it knows).
import pkg from "../../../package.json";
import { findSession } from "../../auth/sessions.ts";
import { backupState, type BackupState } from "../../backup/schedule.ts";
import { coreSettings } from "../../config.ts";
import { whoPays } from "../../pay/accounts.ts";
import { restoreFailure, type RestoreOutcome, type Runtime } from "../../runtime.ts";
import { settingsFor } from "../../upstream/index.ts";
import { allProviders } from "../../upstream/providers.ts";
import { sandboxAdvice, sandboxedPlugins, sandboxState } from "../sandbox.ts";
import { jsonResponse } from "../respond.ts";
import { html, page, wantsHtml } from "./layout.ts";

const startedAt = Date.now();

export interface Probe {
  answers: boolean;
  /** The HTTP status it answered with, or why it did not answer. */
  said: string;
  ms: number;
}

export interface Check {
  name: string;
  label: string;
  configured: boolean;
  /** What configures it, or what is missing: setting names only. */
  note: string;
  probe: Probe | null;
  /** Its probe has not finished yet. */
  checking?: boolean;
  /** Where it is reached; given to admins only. */
  url?: string;
}

const PROBE_TIMEOUT_MS = 3000;
/** Probes are shared for a minute, so the page cannot be used to make the instance hammer its providers. */
export const PROBE_EVERY_MS = 60_000;

/** Any HTTP answer means the host is up and reachable; only a failure to connect or a timeout means it is not. */
async function probe(url: string): Promise<Probe> {
  const started = performance.now();
  try {
    const res = await fetch(url, { method: "GET", redirect: "manual", signal: AbortSignal.timeout(PROBE_TIMEOUT_MS), headers: { "user-agent": `Hearth/${pkg.version} status check` } });
    await res.body?.cancel().catch(() => {});
    return { answers: true, said: `HTTP ${res.status}`, ms: Math.round(performance.now() - started) };
  } catch (e) {
    const name = (e as Error)?.name;
    return { answers: false, said: name === "TimeoutError" ? `no answer within ${PROBE_TIMEOUT_MS / 1000} s` : "could not connect", ms: Math.round(performance.now() - started) };
  }
}

/** How long the page waits for probes; ones still running are shown as such and are ready at the next look. */
const PAGE_WAIT_MS = 1000;

interface Round {
  at: number;
  results: Map<string, Probe>;
  done: Promise<void>;
  finished: boolean;
}

const probes = new WeakMap<Runtime, Round>();

/**
 * This minute's round of probes, started if there is none: each address is
 * asked once a round however many checks share it, and a round still running
 * is never joined by another, so no provider hears from the page more than
 * once a minute whoever opens it.
 */
function probeAll(rt: Runtime, targets: Map<string, string>): Round {
  const held = probes.get(rt);
  const now = rt.clock.now().getTime();
  if (held && (!held.finished || now - held.at < PROBE_EVERY_MS)) return held;
  // The last round's answers stand until this round's arrive.
  const results = new Map(held?.results ?? []);
  const byUrl = new Map<string, string[]>();
  for (const [k, url] of targets) byUrl.set(url, [...(byUrl.get(url) ?? []), k]);
  // One probe at a time: name lookups share the runtime's small worker pool with file I/O, and
  // forty unanswered lookups at once stalled uploads for seconds on a machine without DNS.
  const round: Round = { at: now, results, done: Promise.resolve(), finished: false };
  round.done = (async () => {
    for (const [url, keys] of byUrl) {
      const p = await probe(url);
      for (const k of keys) results.set(k, p);
    }
  })().finally(() => {
    round.finished = true;
  });
  probes.set(rt, round);
  return round;
}

const isSet = (rt: Runtime, k: string) => (rt.config[k] ?? "").trim() !== "";

/** Every setting whose name says it holds a secret, from the core and every plugin. */
function secretSettings(rt: Runtime): string[] {
  const names = new Set(Object.keys(coreSettings));
  for (const p of rt.registry.plugins.values()) for (const k of Object.keys(p.def.config ?? {})) names.add(k);
  return [...names].filter((k) => /(_KEY|_SECRET|_PASSWORD|_PASSPHRASE|_TOKEN)$/.test(k)).sort();
}

function integrations(rt: Runtime): { checks: Check[]; targets: Map<string, string> } {
  const c = rt.config;
  const targets = new Map<string, string>();
  const checks: Check[] = [];
  const add = (ch: Check, url?: string) => {
    checks.push(url ? { ...ch, url } : ch);
    if (url) targets.set(`integration:${ch.name}`, url);
  };
  const ai = c.AI_BASE_URL ? `${c.AI_BASE_URL.replace(/\/+$/, "")}/models` : c.AI_OLLAMA_URL ? `${c.AI_OLLAMA_URL.replace(/\/+$/, "")}/api/tags` : undefined;
  add(
    {
      name: "ai",
      label: "AI models",
      configured: !!c.AI_BASE_URL,
      note: c.AI_BASE_URL ? `AI_BASE_URL${isSet(rt, "AI_API_KEY") ? " with AI_API_KEY" : ""}` : c.AI_OLLAMA_URL ? "Ollama at AI_OLLAMA_URL, when it answers" : "set AI_BASE_URL (or run Ollama at AI_OLLAMA_URL)",
      probe: null,
    },
    ai,
  );
  add({ name: "mail", label: "Mail to and from outside", configured: isSet(rt, "MAIL_DOMAIN"), note: isSet(rt, "MAIL_DOMAIN") ? "MAIL_DOMAIN" : "set MAIL_DOMAIN; mail between accounts here works without it", probe: null });
  // Outside accounts plugins work through, as their manifests declare them.
  for (const p of rt.registry.plugins.values()) {
    const i = p.def.integration;
    if (i) add({ name: p.def.name, label: i.label, configured: i.settings.every((k) => isSet(rt, k)), note: i.settings.join(", "), probe: null });
  }
  add(
    {
      name: "x402",
      label: "x402 payments without an account",
      configured: isSet(rt, "X402_PAY_TO") && c.HEARTH_METERING !== "off",
      note: c.HEARTH_METERING === "off" ? "metering is off (HEARTH_METERING)" : isSet(rt, "X402_PAY_TO") ? `X402_PAY_TO, facilitator X402_FACILITATOR_URL on ${c.X402_NETWORK}` : "set X402_PAY_TO",
      probe: null,
    },
    isSet(rt, "X402_PAY_TO") && c.X402_FACILITATOR_URL ? c.X402_FACILITATOR_URL : undefined,
  );
  // Documents someone else wrote (hosted pages), and whether they have an origin of their own.
  const sandboxed = sandboxedPlugins(rt.registry.plugins.values(), c);
  if (sandboxed.length) {
    const state = sandboxState(rt);
    const advice = sandboxAdvice(sandboxed, c, state.on ? null : state.why);
    const hosts = sandboxed.filter((p) => p.host?.set).map((p) => p.host!.setting);
    add({
      name: "sandbox",
      label: "Pages others wrote, in an origin of their own",
      configured: !advice,
      note: advice ?? [state.on ? state.why : "", ...hosts].filter(Boolean).join("; "),
      probe: null,
    });
  }
  if ("CHAIN_RPC_URL" in c)
    add({ name: "chain", label: "Chain for wallets", configured: isSet(rt, "CHAIN_RPC_URL"), note: isSet(rt, "CHAIN_RPC_URL") ? "CHAIN_RPC_URL" : "set CHAIN_RPC_URL", probe: null }, c.CHAIN_RPC_URL || undefined);
  return { checks, targets };
}

function providerChecks(rt: Runtime, targets: Map<string, string>): Check[] {
  return allProviders()
    .map((p) => {
      const s = settingsFor(rt, p);
      // A provider that needs a key has a <NAME>_KEY or <NAME>_API_KEY setting; one with no default address needs <NAME>_URL.
      const key = [`${p.name}_KEY`, `${p.name}_API_KEY`].find((k) => k in rt.config);
      if (!s.base) return { name: p.name, label: p.label, configured: false, note: `set ${p.name}_URL`, probe: null } as Check;
      targets.set(`provider:${p.name}`, s.base);
      const configured = key ? isSet(rt, key) : true;
      const note = [s.overridden ? `${p.name}_URL` : "default address", key ? (configured ? key : `set ${key}`) : null].filter(Boolean).join("; ");
      return { name: p.name, label: p.label, configured, note, probe: null, url: s.base } as Check;
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Scheduled backups as anyone may see them: whether they run and when they
 * last worked or failed. Where they go and why one failed (a path, a bucket,
 * an endpoint) are for admins.
 */
function backupReport(b: BackupState, admin: boolean) {
  const out = {
    enabled: b.enabled,
    schedule: b.schedule,
    next: b.next,
    keep: b.keep,
    encryption: b.encryption,
    last_success: b.lastSuccess ? { at: b.lastSuccess.at, bytes: b.lastSuccess.bytes, verified: b.lastSuccess.verified } : null,
    last_failure: b.lastFailure ? { at: b.lastFailure.at } : null,
  };
  if (!admin) return out;
  return {
    ...out,
    destination: b.destination,
    problem: b.problem,
    last_success: b.lastSuccess && { ...out.last_success!, name: b.lastSuccess.name, files: b.lastSuccess.files },
    last_failure: b.lastFailure && { at: b.lastFailure.at, reason: b.lastFailure.reason },
  };
}

function restoreReport(r: RestoreOutcome | null, admin: boolean) {
  if (!r) return null;
  if (!admin) return { at: r.at, ok: r.ok };
  return r.ok ? { at: r.at, ok: true, source: r.source, previous: r.previous } : { at: r.at, ok: false, source: r.source, reason: r.reason };
}

function restoreSection(r: ReturnType<typeof restoreReport>) {
  if (!r) return "";
  const named = "source" in r ? html` of <code>${r.source}</code>` : "";
  return r.ok
    ? html`<p><strong>Last restore</strong>${named}, ${when(r.at)}: <span class="ok">restored</span>; this instance serves the backup's data.</p>`
    : html`<p><strong>Last restore</strong>${named}, ${when(r.at)}: <span class="bad">refused</span>${"reason" in r ? html`; <span class="hint">${restoreFailure(r.reason ?? "")}</span>` : ", and the data is as it was"}.</p>`;
}

/** The report; only an admin's starts probes (at most a round a minute) and sees their answers and the addresses. */
export async function statusReport(rt: Runtime, admin: boolean) {
  const { checks, targets } = integrations(rt);
  const providers = providerChecks(rt, targets);
  let results = new Map<string, Probe>();
  if (admin) {
    const round = probeAll(rt, targets);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([round.done, new Promise((r) => (timer = setTimeout(r, PAGE_WAIT_MS)))]);
    clearTimeout(timer);
    results = round.results;
  }
  const fill = (kind: string) => (ch: Check): Check => {
    const key = `${kind}:${ch.name}`;
    const out: Check = { ...ch, probe: results.get(key) ?? null, checking: admin && targets.has(key) && !results.has(key) };
    if (!admin) delete out.url;
    return out;
  };
  const now = Date.now();
  return {
    name: "Hearth",
    version: pkg.version,
    runtime: `Bun ${Bun.version}`,
    started: new Date(startedAt).toISOString(),
    uptime_seconds: Math.round((now - startedAt) / 1000),
    services: rt.registry.services().length,
    methods: rt.registry.methods.size,
    metering: rt.config.HEARTH_METERING !== "off",
    /** Whether providers and integrations were probed for this answer: for signed-in admins only. */
    probed: admin,
    /** Whose priced calls cost what: accounts per HEARTH_METER_ACCOUNTS, strangers by x402 or not at all. */
    payments: whoPays(rt.config),
    integrations: checks.map(fill("integration")),
    providers: providers.map(fill("provider")),
    keys: secretSettings(rt).map((k) => ({ setting: k, set: isSet(rt, k) })),
    backups: backupReport(await backupState(rt), admin),
    /** The last restore this process ran (chosen on /settings/restore): whether it took, and to an admin which backup and why not. */
    restore: restoreReport(rt.lastRestore, admin),
  };
}

function duration(s: number): string {
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return d ? `${d} d ${h} h` : h ? `${h} h ${m} min` : m ? `${m} min` : `${s} s`;
}

const answer = (ch: Check, probed: boolean) =>
  ch.probe === null ? html`<span class="hint">${ch.checking ? "being checked: look again in a moment" : probed ? "not checked" : "checked for admins"}</span>` : ch.probe.answers
      ? html`<span class="ok">answers</span> <span class="hint">(${ch.probe.said}, ${ch.probe.ms} ms)</span>`
      : html`<span class="bad">does not answer</span> <span class="hint">(${ch.probe.said})</span>`;

const STYLE = html`<style>.ok{color:var(--ok);font-weight:600}.bad{color:var(--bad);font-weight:600}dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}dl.facts dt{font-weight:600}dl.facts dd{margin:0}main,header{max-width:56rem}td{word-break:break-word}</style>`;

const when = (iso: string) => iso.replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC");

function backupSection(b: ReturnType<typeof backupReport> & { destination?: string | null; problem?: string | null; last_failure: { at: string; reason?: string } | null }) {
  if (!b.enabled)
    return html`<h2>Backups</h2><p>Scheduled backups are <strong>off</strong>. <span class="hint">Set <code>HEARTH_BACKUP=on</code>, <code>HEARTH_BACKUP_TO</code> and <code>HEARTH_BACKUP_PASSPHRASE</code> (or <code>HEARTH_BACKUP_RECIPIENTS</code>), then restart.</span></p>`;
  // A failure newer than the last success is the state of things; an older one is history.
  const failing = b.last_failure && (!b.last_success || b.last_failure.at > b.last_success.at);
  return html`<h2>Backups</h2><dl class="facts">
<dt>Schedule</dt><dd><code>${b.schedule}</code>${b.next ? html` <span class="hint">(next ${when(b.next)})</span>` : ""}, keeping ${b.keep}${b.encryption ? html`, encrypted with ${b.encryption === "passphrase" ? "a passphrase" : "your age key"}` : ""}</dd>
${b.destination ? html`<dt>Destination</dt><dd><code>${b.destination}</code></dd>` : ""}
${b.problem ? html`<dt>Cannot run</dt><dd><span class="bad">${b.problem}</span></dd>` : ""}
<dt>Last success</dt><dd>${b.last_success ? html`<span class="${failing ? "" : "ok"}">${when(b.last_success.at)}</span> <span class="hint">(${(b.last_success.bytes / 1048576).toFixed(1)} MB, read back and checked)</span>` : html`<span class="hint">none yet</span>`}</dd>
<dt>Last failure</dt><dd>${b.last_failure ? html`<span class="${failing ? "bad" : ""}">${when(b.last_failure.at)}</span>${b.last_failure.reason ? html`<br><span class="hint">${b.last_failure.reason}</span>` : ""}` : html`<span class="hint">none</span>`}</dd></dl>`;
}

export async function statusPage(rt: Runtime, req: Request): Promise<Response> {
  const s = await findSession(rt, req);
  const r = await statusReport(rt, !!s?.account.admin);
  if (!wantsHtml(req)) return jsonResponse(200, { result: r }, crypto.randomUUID(), { "cache-control": "no-store" });
  const row = (ch: Check) =>
    html`<tr><td data-label="Name">${ch.label}${ch.url ? html`<br><code class="hint">${ch.url}</code>` : ""}</td><td data-label="Configured">${ch.configured ? "yes" : "no"} <span class="hint">${ch.note}</span></td><td data-label="Answers">${answer(ch, r.probed)}</td></tr>`;
  const body = html`<dl class="facts"><dt>Version</dt><dd>${r.version} on ${r.runtime}</dd><dt>Up for</dt><dd>${duration(r.uptime_seconds)} <span class="hint">(since ${r.started})</span></dd>
<dt>Services</dt><dd>${r.services} services, ${r.methods} methods</dd><dt>Who pays</dt><dd>${r.payments.text}</dd></dl>
${backupSection(r.backups)}
${restoreSection(r.restore)}
<h2>Integrations</h2>
<table><thead><tr><th scope="col">Integration</th><th scope="col">Configured</th><th scope="col">Answers</th></tr></thead><tbody>${r.integrations.map(row)}</tbody></table>
<h2>Providers</h2>
<table><thead><tr><th scope="col">Provider</th><th scope="col">Configured</th><th scope="col">Answers</th></tr></thead><tbody>${r.providers.map(row)}</tbody></table>
<h2>Keys</h2>
<p class="hint">Whether each secret setting is set; values are never shown.</p>
<table><thead><tr><th scope="col">Setting</th><th scope="col">Set</th></tr></thead><tbody>${r.keys.map((k) => html`<tr><td data-label="Setting"><code>${k.setting}</code></td><td data-label="Set">${k.set ? "yes" : "no"}</td></tr>`)}</tbody></table>
<p class="hint">${r.probed ? "Checked at most once a minute." : "Whether each answers is checked when an admin signed in opens this page, at most once a minute."} The same as JSON: <code>GET /status</code> with <code>Accept: application/json</code>.</p>`;
  return page({ title: "Status", body, account: s?.account ?? null, csrf: s?.csrf, head: STYLE });
}

/**
 * What still needs settings, from the same checks as this page and without
 * probing anything: the start-up summary names these and points here.
 */
export function unconfigured(rt: Runtime): Check[] {
  const { checks, targets } = integrations(rt);
  return [...checks, ...providerChecks(rt, targets)].filter((c) => !c.configured);
}
