// {base}/services: every service and method in the registry with what it
// takes, who may call it and what it costs, and a form that calls it as the
// signed-in person. The form posts to this instance with the session's CSRF
// token and the answer is shown as JSON on the page: no script needed.
import { Kind, type TSchema } from "@sinclair/typebox";
import { findSession, requireCsrf, sessionCaller, type Session } from "../../auth/sessions.ts";
import { dispatch, lookup } from "../../dispatch.ts";
import { asHearthError } from "../../errors.ts";
import { listedPrice } from "../../openapi/price.ts";
import type { MethodEntry } from "../../registry.ts";
import type { Runtime } from "../../runtime.ts";
import { coerceQuery } from "../../validate.ts";
import { readPosted, type Posted } from "./form.ts";
import { html, message, page, type Html } from "./layout.ts";

/** Form fields carry this prefix so an argument can never be mistaken for the form's own fields. */
const ARG = "a.";

interface Tried {
  path: string;
  status: number;
  body: unknown;
  /** What was typed, to fill the form again. */
  given: Record<string, string>;
}

export function priceLabel(price: number | null): string {
  if (price === 0) return "free";
  if (price === null) return "priced by its arguments";
  return `${price} credit${price === 1 ? "" : "s"}`;
}

/** Descriptions mark names in backticks, as in markdown: shown as code. */
function prose(text: string): Html {
  return html`${text.split("`").map((part, i) => (i % 2 ? html`<code>${part}</code>` : part))}`;
}

/** A readable type for an argument: "string, one of a|b", "number 1 to 20", "list of string". */
function typeOf(s: TSchema): string {
  const k = s[Kind];
  if (k === "Union") {
    const options = ((s.anyOf ?? []) as TSchema[]).map((o) => o.const).filter((v) => v !== undefined);
    if (options.length) return `one of ${options.join(", ")}`;
  }
  if (k === "Literal") return `exactly ${s.const}`;
  if (k === "Array") return `list of ${typeOf(s.items as TSchema)}`;
  if (k === "Record") return "object";
  const base = String(k ?? "value").toLowerCase();
  const range = s.minimum !== undefined && s.maximum !== undefined ? ` ${s.minimum} to ${s.maximum}` : s.minimum !== undefined ? ` from ${s.minimum}` : s.maximum !== undefined ? ` up to ${s.maximum}` : "";
  return base + range;
}

function options(s: TSchema): unknown[] | null {
  if (s[Kind] !== "Union") return null;
  const list = ((s.anyOf ?? []) as TSchema[]).map((o) => o.const);
  return list.every((v) => v !== undefined) ? list : null;
}

function field(entry: MethodEntry, name: string, s: TSchema, given: Record<string, string>): Html {
  const id = `${entry.tool}-${name}`;
  const required = entry.required.includes(name);
  const value = given[name] ?? "";
  const hint = [typeOf(s), s.default !== undefined ? `default ${JSON.stringify(s.default)}` : null, s[Kind] === "Array" ? "comma-separated" : null]
    .filter(Boolean)
    .join("; ");
  const label = html`<label for="${id}">${name}${required ? html` <span aria-hidden="true">*</span><span class="vh">(required)</span>` : ""}</label>
<p class="hint" id="${id}-hint">${prose(s.description ?? "")} <span>(${hint})</span></p>`;
  const common = html`id="${id}" name="${ARG + name}" aria-describedby="${id}-hint" ${required ? html`required` : ""}`;
  const choices = options(s);
  if (choices || s[Kind] === "Boolean") {
    const list = choices ?? [true, false];
    return html`${label}<select ${common}><option value=""${value === "" ? html` selected` : ""}>${required ? "choose" : "(not given)"}</option>
${list.map((o) => html`<option${String(o) === value ? html` selected` : ""}>${String(o)}</option>`)}</select>`;
  }
  const long = s[Kind] === "Object" || s[Kind] === "Record" || (s[Kind] === "String" && (s.maxLength === undefined || s.maxLength > 200) && !s.format && !s.pattern);
  if (long) return html`${label}<textarea ${common} rows="3" spellcheck="false">${value}</textarea>`;
  const numeric = s[Kind] === "Number" || s[Kind] === "Integer";
  return html`${label}<input type="text" ${numeric ? html`inputmode="decimal"` : ""} ${common} value="${value}" autocomplete="off" spellcheck="false">`;
}

function methodSection(rt: Runtime, entry: MethodEntry, s: Session | null, tried: Tried | null): Html {
  const d = entry.def;
  const props = (d.args.properties ?? {}) as Record<string, TSchema>;
  const names = Object.keys(props);
  const verb = d.kind === "read" ? "GET" : "POST";
  const price = listedPrice(rt, entry);
  const mine = tried?.path === entry.path ? tried : null;
  const given = mine?.given ?? {};
  const canTry = s !== null;
  const form = canTry
    ? html`<form method="post" action="/services#${entry.tool}-answer" class="try">
<input type="hidden" name="csrf" value="${s!.csrf}"><input type="hidden" name="method" value="${entry.path}">
${names.map((n) => field(entry, n, props[n], given))}
<p><button type="submit">${d.kind === "read" ? "Call" : d.destructive ? "Call (removes or overwrites data)" : "Call (changes your data)"} ${entry.path}</button></p>
</form>`
    : html`<p class="hint"><a href="/signin?next=/services%23${entry.tool}">Sign in</a> to try it here.</p>`;
  const answer = mine
    ? html`<div role="status" aria-live="polite" id="${entry.tool}-answer"><p><strong>HTTP ${mine.status}</strong></p><pre class="json" tabindex="0" aria-label="Answer from ${entry.path}">${JSON.stringify(mine.body, null, 2)}</pre></div>`
    : "";
  const short = d.description.split(/(?<=\.)\s/)[0];
  const rest = d.description.slice(short.length).trim();
  // Signed in, the form's labels and hints describe each argument; signed out, a table does.
  const argsPart = canTry
    ? ""
    : names.length
      ? html`<table class="args"><thead><tr><th scope="col">Argument</th><th scope="col">Type</th><th scope="col">About</th></tr></thead><tbody>
${names.map(
  (n) =>
    html`<tr><td data-label="Argument"><code>${n}</code>${entry.required.includes(n) ? " (required)" : ""}</td><td data-label="Type">${typeOf(props[n])}</td><td data-label="About">${props[n].description ?? ""}</td></tr>`,
)}</tbody></table>`
      : html`<p class="hint">Takes no arguments.</p>`;
  return html`<details id="${entry.tool}" ${mine ? html`open` : ""}>
<summary><span class="name"><code>${entry.path}</code> <span class="tag">${verb}</span> <span class="tag">${d.access === "account" ? "account" : "public"}</span> <span class="tag">${priceLabel(price)}</span></span>
<span class="short">${prose(short)}</span></summary>
${rest ? html`<p>${prose(rest)}</p>` : ""}
<p class="hint"><code>${verb} /api/v1/${entry.path}</code> · MCP tool <code>${entry.tool}</code>${d.destructive ? " · removes or overwrites data" : ""}${entry.classes.outbound ? " · sends outside this instance" : ""}${
    entry.classes.untrusted ? " · answers with content from outside you" : ""
  }${d.openWorld ? " · asks a provider outside this instance" : ""}${
    d.withheldFromAgent ? " · withheld from the agent" : ""
  }</p>
${argsPart}${canTry && names.length === 0 ? html`<p class="hint">Takes no arguments.</p>` : ""}
${form}${answer}
</details>`;
}

const STYLE = html`<style>
details{border:1px solid var(--line);border-radius:.5rem;margin:.5rem 0;padding:.5rem .8rem}
details[open]{padding-bottom:1rem}
summary{cursor:pointer;list-style:none;display:block;min-height:2.75rem;padding:.2rem 0 .2rem 1.3rem;position:relative}
summary::-webkit-details-marker{display:none}
summary::before{content:"▸";position:absolute;left:0;top:.2rem;color:var(--accent)}
details[open]>summary::before{content:"▾"}
summary .name{display:flex;flex-wrap:wrap;gap:.25rem .5rem;align-items:baseline}
summary .name code{font-weight:700;font-size:1.05rem;word-break:break-all}
summary .short{display:block;color:var(--muted);font-size:.95rem}
main,header{max-width:56rem}
.tag{font-size:.85rem;border:1px solid var(--line);border-radius:1rem;padding:0 .5rem;color:var(--muted)}
textarea{width:100%;max-width:28rem;font:inherit;padding:.6rem .7rem;border:1px solid var(--muted);border-radius:.4rem;background:var(--field);color:var(--fg)}
pre.json{overflow:auto;max-height:24rem;white-space:pre-wrap;overflow-wrap:anywhere;padding:.75rem;border:1px solid var(--line);border-radius:.4rem;background:var(--field);font:.9rem/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}
.toc{columns:10rem;padding-left:1.2rem}
.vh{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
.args td:first-child{white-space:nowrap}
</style>`;

export async function servicesPage(rt: Runtime, req: Request, tried: Tried | null = null, status = 200): Promise<Response> {
  const s = await findSession(rt, req);
  const services = rt.registry.services();
  const body = html`<p>Every method this instance answers, by service. Each is one call over HTTP (<code>/api/v1/&lt;service&gt;/&lt;method&gt;</code>) and an MCP tool
(<code>&lt;service&gt;_&lt;method&gt;</code>). The whole list is also an <a href="/openapi.json">OpenAPI document</a>, readable at <a href="/reference">/reference</a>.
${s ? "Forms here call the method as you, and can change your data." : ""}</p>
<nav aria-label="Services"><ul class="toc">${services.map((n) => html`<li><a href="#service-${n}">${n}</a></li>`)}</ul></nav>
${services.map((n) => {
  const p = rt.registry.plugins.get(n)!;
  return html`<section aria-labelledby="service-${n}"><h2 id="service-${n}">${n}</h2><p>${prose(p.def.description)}</p>
${p.methods.map((m) => methodSection(rt, m, s, tried))}</section>`;
})}`;
  return page({ title: "Services", body, account: s?.account ?? null, csrf: s?.csrf, head: STYLE, status });
}

/** A "try it" form posted: the call runs through dispatch as the signed-in person, like any API call. */
export async function servicesTry(rt: Runtime, req: Request, address: string): Promise<Response> {
  const s = await findSession(rt, req);
  const requestId = crypto.randomUUID();
  if (!s) return page({ title: "Services", status: 401, body: html`${message("alert", "Sign in to call methods from this page.")}<p><a href="/signin?next=/services">Sign in</a></p>` });
  let posted: Posted;
  try {
    posted = await readPosted(rt, req);
    requireCsrf(s, posted.get("csrf"));
  } catch (e) {
    const err = asHearthError(e);
    return page({ title: "Services", status: err.status, account: s.account, csrf: s.csrf, body: html`${message("alert", err.message)}<p><a href="/services">Back to the services</a></p>` });
  }
  const path = posted.get("method") ?? "";
  const [service, method] = path.split("/");
  let entry: MethodEntry;
  try {
    entry = lookup(rt, service ?? "", method ?? "");
  } catch (e) {
    return page({ title: "Services", status: 404, account: s.account, csrf: s.csrf, body: html`${message("alert", asHearthError(e).message)}<p><a href="/services">Back</a></p>` });
  }
  // Fields left empty are not given, as in a query string; values are coerced by the schema as a query string is.
  const given: Record<string, string> = {};
  const params = new URLSearchParams();
  for (const name of entry.argNames) {
    const v = posted.get(ARG + name);
    if (v === undefined) continue;
    given[name] = v;
    if (v.trim() !== "") params.set(name, v);
  }
  let status = 200;
  let body: unknown;
  const caller = { ...sessionCaller(s), address };
  try {
    const args = coerceQuery(entry, params);
    body = { result: await dispatch(rt, { service: entry.service, method: entry.name, args, caller, requestId, baseUrl: new URL(req.url).origin, surface: "page" }) };
  } catch (e) {
    const err = asHearthError(e);
    if (err.kind === "internal") rt.log.error("call failed", { rid: requestId, service: entry.service, method: entry.name, error: String((e as Error)?.stack ?? e) });
    status = err.status;
    body = { error: err.body(err.kind === "internal" ? requestId : undefined) };
  }
  rt.log.line({ rid: requestId, service: entry.service, method: entry.name, status, caller: s.account.id, via: "services page" });
  return servicesPage(rt, req, { path: entry.path, status, body, given }, 200);
}

