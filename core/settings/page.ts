// /settings: every setting the core and the plugins declare, for the admin,
// grouped by what it is for, each with what it does, its default and the
// value the instance runs with. Saving writes config/hearth.env (the file
// the server and every command read) in one rename; a setting read on every
// use applies at once, the others say that they wait for a restart. Secrets
// are never sent back: the page says whether one is set, and a new one
// replaces it.
import { parseEnv } from "node:util";
import { settingsFile } from "../config.ts";
import { asHearthError, HearthError, invalid } from "../errors.ts";
import type { Session } from "../auth/sessions.ts";
import { jsonResponse } from "../http/respond.ts";
import type { Posted } from "../http/pages/form.ts";
import { html, message, page, seeOther, wantsHtml, type Html } from "../http/pages/layout.ts";
import type { Runtime } from "../runtime.ts";
import { adminPost, adminSession, refusal, rid } from "./admin.ts";
import { catalog, checkValue, GROUPS, type SettingInfo } from "./catalog.ts";
import { readSettingsText, writeSettings } from "./file.ts";
import { PROBES, probesFor, type ProbeResult } from "./probes.ts";

const slug = (group: string) => group.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/-$/, "");

/** What the settings file sets now. */
const fileValues = (rt: Runtime) => parseEnv(readSettingsText(settingsFile(rt.config))) as Record<string, string>;

interface View {
  error?: { field?: string; message: string; group?: string };
  notice?: string;
  probe?: { group: string; result: ProbeResult };
  /** What was typed, shown again after a refusal (never a secret). */
  typed?: Record<string, string>;
  status?: number;
}

function field(rt: Runtime, s: SettingInfo, file: Record<string, string>, v: View): Html {
  const id = `s-${s.name}`;
  const running = rt.config[s.name] ?? "";
  const saved = file[s.name];
  const overridden = !s.fixed && rt.environment.has(s.name);
  const pending = saved !== undefined && saved !== running && !s.live && !overridden;
  const wrong = v.error?.field === s.name;
  const shown = v.typed?.[s.name] ?? running;
  const hint = html`<span id="${id}-hint" class="hint">${s.description} ${s.default ? html`Default: <code>${s.default}</code>.` : "Default: empty."} ${
    s.fixed
      ? "Set in the environment only."
      : // Overridden, nothing saved here applies, at once or after a restart: say what decides instead.
        overridden
        ? html`<strong>Overridden by the environment variable <code>${s.name}</code>.</strong>`
        : s.live
          ? "Applies at once."
          : "Restart needed to apply."
  }${pending ? html` <strong>Saved; the running instance uses the old value until it restarts.</strong>` : ""}</span>${
    overridden
      ? html`<span id="${id}-env" class="env" role="note">Set in the server's environment, which wins over the settings file: the value shown is the one in force.${
          saved !== undefined && saved !== running ? html` The file says <code>${s.secret ? "(a secret)" : saved}</code>, which` : " A value saved here"
        } takes effect only once <code>${s.name}</code> is removed from the environment (the service unit, docker run -e, or the shell) and Hearth restarts.</span>`
      : ""
  }`;
  const described = `${id}-hint${overridden ? ` ${id}-env` : ""}${wrong ? ` ${id}-error` : ""}`;
  const err = wrong ? html`<span id="${id}-error" class="field-error">${v.error!.message}</span>` : "";
  let input: Html;
  if (s.fixed) input = html`<p class="value"><code>${running || "(default)"}</code></p>`;
  else if (s.secret)
    input = html`<input type="password" id="${id}" name="${s.name}" autocomplete="new-password" aria-describedby="${described}"${wrong ? html` aria-invalid="true"` : ""} placeholder="${running ? "set: type to replace" : "not set"}">
<label class="choice"><input type="checkbox" name="clear" value="${s.name}"> Clear ${s.name}</label>`;
  else if (s.choices) {
    const cur = shown || s.default;
    input = html`<select id="${id}" name="${s.name}" aria-describedby="${described}"${wrong ? html` aria-invalid="true"` : ""}>${s.choices.map((c) => html`<option${c === cur ? html` selected` : ""}>${c}</option>`)}</select>`;
  } else input = html`<input type="text" id="${id}" name="${s.name}" value="${shown}" spellcheck="false" aria-describedby="${described}"${wrong ? html` aria-invalid="true"` : ""}>`;
  return html`<div class="setting${wrong ? " wrong" : ""}">
<label for="${id}"><code>${s.name}</code>${s.secret ? html` <span class="tag">${running ? "secret, set" : "secret, not set"}</span>` : ""}</label>
${err}${input}
${hint}</div>`;
}

export async function settingsPage(rt: Runtime, s: Session, v: View = {}): Promise<Response> {
  const all = catalog(rt.registry);
  const file = fileValues(rt);
  const where = settingsFile(rt.config);
  const groups = GROUPS.filter((g) => all.some((x) => x.group === g));
  const sections = groups.map((g) => {
    const list = all.filter((x) => x.group === g);
    const probes = probesFor(list.map((x) => x.name));
    const result = v.probe?.group === g ? v.probe.result : null;
    return html`<section aria-labelledby="g-${slug(g)}">
<h2 id="g-${slug(g)}">${g}</h2>
${v.error?.group === g ? message("alert", v.error.message) : ""}
${result ? html`<p class="${result.ok ? "notice" : "alert"}" role="${result.ok ? "status" : "alert"}">${result.ok ? "Works: " : "Does not work: "}${result.said}</p>` : ""}
<form method="post" action="/settings" novalidate>
<input type="hidden" name="csrf" value="${s.csrf}"><input type="hidden" name="group" value="${g}">
${list.map((x) => field(rt, x, file, v))}
<p class="actions"><button type="submit">Save ${g.toLowerCase()}</button>${probes.map((p) => html` <button class="quiet" type="submit" name="test" value="${p}">${PROBES[p].label}</button>`)}</p>
</form></section>`;
  });
  const body = html`${message("notice", v.notice)}${v.error && !v.error.group ? message("alert", v.error.message) : ""}
<p>Saved to <code>${where}</code>, which the server and every <code>hearth</code> command read; a variable set in the environment wins over it. Lines you wrote there yourself, and comments, are kept.</p>
<p>Backups are set under <a href="#g-instance">Instance</a>; to bring one back, <a href="/settings/restore">restore a backup</a>.</p>
<nav aria-label="Setting groups" class="toc"><ul>${groups.map((g) => html`<li><a href="#g-${slug(g)}">${g}</a></li>`)}</ul></nav>
${sections}`;
  return page({ title: "Settings", body, account: s.account, csrf: s.csrf, status: v.status, head: STYLE, path: "/settings" });
}

const STYLE = html`<style>
.setting{margin:0 0 1.25rem}.setting label{margin-bottom:.15rem}.setting .hint{display:block;max-width:40rem}
.setting input[type=text],.setting input[type=password],.setting select{max-width:36rem}
.setting.wrong input,.setting.wrong select{border-color:var(--bad);border-width:2px}
.env{display:block;max-width:40rem;border-left:4px solid var(--accent);padding:.25rem .6rem;margin:.3rem 0}
.field-error{display:block;color:var(--bad);font-weight:600;margin:.2rem 0}
.tag{font-weight:400;font-size:.85rem;color:var(--muted);border:1px solid var(--line);border-radius:1rem;padding:0 .5rem}
.toc ul{display:flex;flex-wrap:wrap;gap:.25rem 1rem;padding:0;list-style:none}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;position:sticky;bottom:0;background:var(--bg);padding:.5rem 0;margin:0;border-top:1px solid var(--line)}
code{overflow-wrap:anywhere}
</style>`;

export async function settingsGet(rt: Runtime, req: Request): Promise<Response> {
  const s = await adminSession(rt, req);
  if (s instanceof Response) return s;
  if (!wantsHtml(req)) {
    const file = fileValues(rt);
    const list = catalog(rt.registry).map((x) => ({
      name: x.name,
      group: x.group,
      plugin: x.plugin,
      description: x.description,
      default: x.default,
      secret: x.secret,
      applies: x.fixed ? "environment" : rt.environment.has(x.name) ? "overridden by the environment" : x.live ? "at once" : "after restart",
      // Set in the environment, which wins over the file: a value saved to the file waits for the variable to go.
      ...(!x.fixed && rt.environment.has(x.name) ? { overridden_by_environment: true } : {}),
      ...(x.secret ? { set: !!rt.config[x.name] } : { value: rt.config[x.name] ?? "", saved: file[x.name] ?? null }),
      ...(x.choices ? { choices: x.choices } : {}),
    }));
    return jsonResponse(200, { result: { file: settingsFile(rt.config), settings: list } }, rid(), { "cache-control": "no-store" });
  }
  const saved = new URL(req.url).searchParams.get("saved");
  return settingsPage(rt, s, { notice: saved ? `Saved ${saved.toLowerCase()}.` : undefined });
}

/**
 * The values a post asks for, checked: a field left as it is changes
 * nothing, a secret left empty keeps its value (listed in "clear" it goes).
 */
export function changesOf(rt: Runtime, posted: Posted, only?: string | string[]): { changes: Record<string, string | null>; merged: Record<string, string> } {
  const all = catalog(rt.registry);
  const file = fileValues(rt);
  const known = new Map(all.map((x) => [x.name, x]));
  const clear = new Set(posted.all("clear"));
  const changes: Record<string, string | null> = {};
  const merged: Record<string, string> = { ...rt.config };
  const names = posted.json ? Object.keys((posted.value("settings") as object) ?? {}) : all.filter((x) => !only || (Array.isArray(only) ? only.includes(x.name) : x.group === only)).map((x) => x.name);
  const valueOf = (n: string) => (posted.json ? (posted.value("settings") as Record<string, unknown>)[n] : posted.get(n));
  for (const c of clear) if (!known.has(c)) throw invalid(c, `there is no setting ${c}`);
  for (const n of new Set([...names, ...clear])) {
    const info = known.get(n);
    if (!info) throw invalid(n, `there is no setting ${n}`);
    const raw = valueOf(n);
    if (clear.has(n)) {
      if (!info.secret) throw invalid(n, `only a secret is cleared this way; empty the field instead`);
      changes[n] = null;
      merged[n] = info.default;
      continue;
    }
    if (raw === undefined || raw === null) continue;
    if (typeof raw !== "string") throw invalid(n, "a setting's value is a string");
    if (info.fixed) {
      if (raw === "" || raw === (rt.config[n] ?? "")) continue;
      checkValue(info, raw);
    }
    if (info.secret && raw === "") continue;
    const v = checkValue(info, raw);
    const before = file[n] ?? rt.config[n] ?? info.default;
    merged[n] = v === "" && info.default === "" ? "" : v;
    if (v === before) continue;
    // Emptied: a setting whose default is empty loses its line; one with a default is set empty on purpose.
    changes[n] = v === "" && info.default === "" ? null : v;
  }
  return { changes, merged };
}

export async function settingsPost(rt: Runtime, req: Request): Promise<Response> {
  const got = await adminPost(rt, req);
  if (got instanceof Response) return got;
  const { s, posted } = got;
  const group = posted.json ? undefined : posted.get("group");
  const typed = () => (posted.json ? {} : Object.fromEntries(catalog(rt.registry).filter((x) => !x.secret && posted.get(x.name) !== undefined).map((x) => [x.name, posted.get(x.name)!])));
  try {
    const test = posted.get("test");
    const { changes, merged } = changesOf(rt, posted, group);
    if (test) {
      const probe = PROBES[test];
      if (!probe) throw invalid("test", `there is no test "${test}" (${Object.keys(PROBES).join(", ")})`);
      const result = await probe.run(merged);
      if (posted.json) return jsonResponse(200, { result }, rid(), { "cache-control": "no-store" });
      return settingsPage(rt, s, { probe: { group: group ?? "", result }, typed: typed() });
    }
    const applied = saveSettings(rt, changes);
    rt.log.info("settings saved", { account: s.account.id, settings: Object.keys(changes).join(","), applied: applied.live.join(",") });
    if (posted.json)
      return jsonResponse(200, { result: { saved: Object.keys(changes), applied: applied.live, restart: applied.restart, ...(applied.overridden.length ? { overridden: applied.overridden } : {}) } }, rid(), { "cache-control": "no-store" });
    if (applied.overridden.length)
      return settingsPage(rt, s, {
        notice: `Saved ${(group ?? "settings").toLowerCase()}. ${applied.overridden.join(", ")} ${applied.overridden.length === 1 ? "is" : "are"} set in the server's environment, which wins over the file: what you saved takes effect only once ${applied.overridden.length === 1 ? "that variable is" : "those variables are"} removed from the environment and Hearth restarts.`,
      });
    return seeOther(`/settings?saved=${encodeURIComponent(group ?? "settings")}#g-${slug(group ?? "")}`);
  } catch (e) {
    const err = asHearthError(e);
    if (posted.json || err.status === 401 || err.status === 403) return refusal(err, posted.json, s, "/settings");
    return settingsPage(rt, s, { error: { field: err.field, message: err.field ? `${err.field}: ${err.message}` : err.message, group }, typed: typed(), status: err.status });
  }
}

/**
 * Writes the changes to the settings file in one rename, then hands the
 * running instance those it reads on every use, but for one the environment
 * sets: the environment wins over the file, now and after a restart.
 */
export function saveSettings(rt: Runtime, changes: Record<string, string | null>): { live: string[]; restart: string[]; overridden: string[] } {
  const names = Object.keys(changes);
  if (!names.length) return { live: [], restart: [], overridden: [] };
  const known = new Map(catalog(rt.registry).map((x) => [x.name, x]));
  let written: Record<string, string>;
  try {
    written = writeSettings(settingsFile(rt.config), changes);
  } catch (e) {
    if (e instanceof HearthError) throw e;
    throw new HearthError("storage_unavailable", `the settings file ${settingsFile(rt.config)} could not be written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): nothing was changed`);
  }
  const overridden = names.filter((n) => rt.environment.has(n));
  const live = names.filter((n) => known.get(n)?.live && !rt.environment.has(n));
  rt.reconfigure(Object.fromEntries(live.map((n) => [n, written[n] ?? known.get(n)!.default])));
  return { live, restart: names.filter((n) => !known.get(n)?.live && !rt.environment.has(n)), overridden };
}
