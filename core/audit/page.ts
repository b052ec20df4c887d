// The /activity page: the signed-in account's own calls, newest first, with
// filters in the address (so a filtered view can be kept as a link), a link
// to older entries and the exports of what is shown.
import type { Session } from "../auth/sessions.ts";
import { html, message, page } from "../http/pages/layout.ts";
import type { Runtime } from "../runtime.ts";
import type { AuditEntry } from "./read.ts";

const OUTCOMES: [string, string][] = [
  ["", "Any"],
  ["ok", "Done"],
  ["refused", "Refused or failed"],
  ["unauthenticated", "No credentials (401)"],
  ["payment_required", "Unpaid (402)"],
  ["forbidden", "Forbidden (403)"],
  ["invalid_argument", "Bad argument (400)"],
  ["not_found", "Not found (404)"],
];

const stamp = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace("T", " ") + " UTC";

function who(e: AuditEntry): string {
  if (e.via === "token") return `${e.credentialName ?? "token"} (${e.credential ?? "?"})`;
  if (e.via === "payment") return `x402 ${e.credential ?? ""}`.trim();
  return e.via;
}

function cost(e: AuditEntry): string {
  if (e.paid) return `${e.paid} (x402)`;
  return e.credits ? `${e.credits} credit${e.credits === 1 ? "" : "s"}` : "free";
}

export function activityPage(rt: Runtime, s: Session, o: { entries: AuditEntry[]; next: number | null; query: URLSearchParams; error?: string; status?: number }): Response {
  const q = (k: string) => o.query.get(k) ?? "";
  const kept = new URLSearchParams([...o.query].filter(([k, v]) => k !== "before" && v !== ""));
  const older = o.next ? `/activity?${new URLSearchParams([...kept, ["before", String(o.next)]])}` : null;
  const days = Number(rt.config.HEARTH_AUDIT_DAYS ?? "90");
  const body = html`<p class="hint">Every call made with your account — by you, your tokens, connected apps, the agent and sync clients — answered or refused. ${days > 0 ? `Entries are kept ${days} days.` : "Entries are kept until removed by the owner."} Arguments are shown shortened, with secrets hidden.</p>
${message("alert", o.error)}
<form method="get" action="/activity" class="filters">
<div><label for="method">Method</label>
<input type="text" id="method" name="method" value="${q("method")}" placeholder="notes or notes/add"></div>
<div><label for="credential">Credential</label>
<input type="text" id="credential" name="credential" value="${q("credential")}" placeholder="token id, or session"></div>
<div><label for="outcome">Outcome</label>
<select id="outcome" name="outcome">
${OUTCOMES.map(([v, label]) => html`<option value="${v}" ${q("outcome") === v ? html`selected` : ""}>${label}</option>`)}
</select></div>
<div><label for="from">From</label>
<input type="date" id="from" name="from" value="${q("from")}"></div>
<div><label for="to">To</label>
<input type="date" id="to" name="to" value="${q("to")}"></div>
<p><button type="submit">Show</button> <a href="/activity">Clear</a></p>
</form>
<p>Export what these filters select: <a href="/activity/export.jsonl?${kept.toString()}">JSON lines</a> · <a href="/activity/export.csv?${kept.toString()}">CSV</a></p>
${
  o.entries.length
    ? html`<table>
<caption class="hint">Newest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">Method</th><th scope="col">By</th><th scope="col">Via</th><th scope="col">Outcome</th><th scope="col">Cost</th><th scope="col">Arguments</th></tr></thead>
<tbody>
${o.entries.map(
  (e) => html`<tr><td data-label="When">${stamp(e.at)}</td><td data-label="Method"><code>${e.service}/${e.method}</code></td><td data-label="By">${who(e)}</td><td data-label="Via">${e.surface}</td><td data-label="Outcome">${e.outcome === "ok" ? "done" : `${e.outcome} (${e.status})`}</td><td data-label="Cost">${cost(e)}</td><td data-label="Arguments"><code class="args">${e.args}</code></td></tr>`,
)}
</tbody>
</table>`
    : html`<p>No calls${o.query.size ? " match these filters" : " yet"}.</p>`
}
${older ? html`<p><a href="${older}">Older entries</a></p>` : ""}`;
  return page({
    title: "Activity",
    body,
    account: s.account,
    csrf: s.csrf,
    status: o.status,
    // A table of seven columns needs more than the reading width of other pages; on a phone it folds into one block per entry.
    head: html`<style>header,main,footer{max-width:76rem}
.filters{display:grid;grid-template-columns:repeat(auto-fill,minmax(13rem,1fr));gap:0 1rem;align-items:end}
.filters p{grid-column:1/-1}
.filters input,.filters select{max-width:none}
table{font-size:.92rem}
td:first-child{white-space:nowrap}
code.args{word-break:break-word;font-size:.85rem}
caption{text-align:left}
@media (max-width:36rem){td:first-child{white-space:normal}}</style>`,
  });
}
