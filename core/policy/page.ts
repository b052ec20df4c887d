// {base}/approvals: what is waiting for the owner, in plain words (which
// client asks, the method and what it does, the arguments, the price, why it
// asks), with Approve and Decline; below, the latest answered. The same as
// JSON for programs holding a session. Only the account's own session
// decides, with its CSRF token: a token, an app or the agent cannot.
import type { Session } from "../auth/sessions.ts";
import { html, message, page, PAGE_CSP, type Html } from "../http/pages/layout.ts";
import type { Runtime } from "../runtime.ts";
import type { Approval } from "./approvals.ts";

const stamp = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace("T", " ") + " UTC";

const price = (n: number) => (n ? `${n} credit${n === 1 ? "" : "s"} ($${(n / 100).toFixed(2)})` : "free");

function argList(text: string): Html {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return html`<code class="args">${text}</code>`;
  }
  if (!v || typeof v !== "object" || Array.isArray(v) || Object.keys(v).length === 0) return html`<p class="hint">No arguments.</p>`;
  return html`<dl class="args">${Object.entries(v as Record<string, unknown>).map(
    ([k, x]) => html`<dt>${k}</dt><dd>${typeof x === "string" ? x : JSON.stringify(x)}</dd>`,
  )}</dl>`;
}

/** What the method does, as its manifest says. */
function doing(rt: Runtime, a: Approval): string {
  const e = rt.registry.get(a.service, a.method);
  return e?.def.description ?? "";
}

function waitingCard(rt: Runtime, s: Session, a: Approval): Html {
  const path = `${a.service}/${a.method}`;
  return html`<section class="ask" aria-labelledby="ask-${a.id}">
<h2 id="ask-${a.id}"><code>${path}</code> for ${a.client}</h2>
<p>${doing(rt, a)}</p>
${argList(a.args)}
<p><strong>Price:</strong> ${price(a.price)} · <strong>Asked:</strong> ${stamp(a.created)} · <strong>Waits until:</strong> ${stamp(a.expires)}</p>
<p class="hint">Why it asks: ${a.reason}.</p>
<form method="post" action="/approvals/decide" class="decide">
<input type="hidden" name="csrf" value="${s.csrf}"><input type="hidden" name="id" value="${a.id}">
<button type="submit" name="decision" value="approve" aria-label="Approve ${path} for ${a.client}">Approve</button>
<button class="quiet" type="submit" name="decision" value="decline" aria-label="Decline ${path} for ${a.client}">Decline</button>
</form>
</section>`;
}

const SAID: Record<string, string> = { approved: "Approved", declined: "Declined", expired: "No answer in time", withdrawn: "Withdrawn by the client" };

export function approvalsPage(rt: Runtime, s: Session, o: { waiting: Approval[]; settled: Approval[]; notice?: string; error?: string; status?: number }): Response {
  const body = html`${message("notice", o.notice)}${message("alert", o.error)}
<p class="hint">Calls your credentials' policies hold for you. A call waits here until you answer, then runs or is refused; nothing is done or charged before you approve.</p>
${o.waiting.length ? o.waiting.map((a) => waitingCard(rt, s, a)) : html`<p>Nothing is waiting for you.</p>`}
<section class="push" aria-labelledby="push-heading">
<h2 id="push-heading">On your devices</h2>
<p class="hint" id="push-state" aria-live="polite">A browser that can receive notifications can be told when a call waits here.</p>
<button type="button" id="push-on" hidden>Notify me on this device</button>
</section>
<h2>Answered lately</h2>
${
  o.settled.length
    ? html`<table><thead><tr><th scope="col">Asked</th><th scope="col">Method</th><th scope="col">For</th><th scope="col">Answer</th></tr></thead><tbody>
${o.settled.map(
  (a) => html`<tr><td data-label="Asked">${stamp(a.created)}</td><td data-label="Method"><code>${a.service}/${a.method}</code></td><td data-label="For">${a.client}</td><td data-label="Answer">${SAID[a.decision ?? "expired"]}${a.decidedBy ? ` by ${a.decidedBy}` : ""}</td></tr>`,
)}
</tbody></table>`
    : html`<p>None yet.</p>`
}`;
  return page({
    title: "Approvals",
    body,
    account: s.account,
    csrf: s.csrf,
    status: o.status,
    // Its one script, served here, subscribes this device to notifications (core/policy/push.ts).
    csp: PAGE_CSP.replace("default-src 'none';", "default-src 'none'; script-src 'self'; worker-src 'self';"),
    head: html`<script src="/approvals/push.js" defer></script><style>.ask{border:1px solid var(--line);border-radius:.5rem;padding:0 1rem .5rem;margin:1rem 0}
.ask h2{margin-top:1rem;overflow-wrap:anywhere}
.args{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:.5rem 0}
.args dt{font-weight:600}.args dd{margin:0;overflow-wrap:anywhere}
.decide{display:flex;gap:.75rem;flex-wrap:wrap;margin:1rem 0 .5rem}</style>`,
  });
}

/** The page's script: registers the app's service worker (which shows the notification), subscribes with this instance's VAPID key, and sends the subscription with the session's CSRF token. */
export const PUSH_SCRIPT = `(() => {
  const button = document.getElementById("push-on");
  const state = document.getElementById("push-state");
  if (!button || !("serviceWorker" in navigator) || !("PushManager" in window)) return;
  const csrf = document.querySelector('meta[name="csrf-token"]')?.content ?? "";
  const say = (text) => { state.textContent = text; };
  const b64 = (t) => { const s = atob(t.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((t.length + 3) % 4)); return Uint8Array.from(s, (c) => c.charCodeAt(0)); };
  button.hidden = false;
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const info = await (await fetch("/approvals/push", { headers: { accept: "application/json" } })).json();
      const reg = await navigator.serviceWorker.register("/my/sw.js", { scope: "/my/" });
      // Its scope is the app's, not this page's: waited for by its own state, as ready would wait for one controlling this page.
      await new Promise((ok, no) => {
        const w = reg.installing || reg.waiting;
        if (!w) return ok();
        w.addEventListener("statechange", () => (w.state === "activated" ? ok() : w.state === "redundant" ? no(new Error("the service worker did not install")) : null));
      });
      const sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: b64(info.result.publicKey) });
      const res = await fetch("/approvals/push", { method: "POST", headers: { "content-type": "application/json", "x-csrf-token": csrf }, body: JSON.stringify({ subscription: sub.toJSON() }) });
      if (!res.ok) throw new Error((await res.json()).error?.message ?? "the subscription was refused");
      say("This device will be notified when a call waits for you.");
    } catch (e) {
      say("This device could not be subscribed: " + (e && e.message ? e.message : e));
      button.disabled = false;
    }
  });
})();
`;
