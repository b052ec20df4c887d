// /agent: a conversation with an agent in the browser. The page is plain
// HTML; its script posts each message to /agent/send with the session's CSRF
// token and shows the answer as it streams back (NDJSON: text pieces, tool
// calls, then the whole result).
import { asHearthError, invalid, unauthenticated } from "hearth";
import { html, page, PAGE_CSP, raw, seeOther } from "hearth/pages";
import { listAgents } from "./agents.ts";
import type { AgentCtx } from "./run.ts";

const CSP = PAGE_CSP.replace("default-src 'none';", "default-src 'none'; script-src 'self';");

export async function agentPage(req: Request, ctx: AgentCtx): Promise<Response> {
  const csrf = ctx.caller.via === "session" ? await ctx.agentHost.csrf(req) : null;
  const account = ctx.caller.account;
  if (!account || !csrf) return seeOther("/signin?next=/agent");
  const url = new URL(req.url);
  const agents = await listAgents(ctx.db, account.id);
  const current = url.searchParams.get("c");
  const conv = current ? await ctx.conversations.of(ctx.db, account.id, current) : null;
  const chosen = conv?.agent ?? url.searchParams.get("agent") ?? "default";
  // Of what tools answered, only the sends refused are shown: the owner sees every attempt to send out that was stopped.
  const messages = conv ? (await ctx.conversations.recentMessages(ctx.db, conv.id, 200)).flatMap((m): Shown[] => (m.role !== "tool" ? [{ role: m.role, content: m.content }] : refusedSend(m.content))) : [];
  const recent = await ctx.conversations.latest(ctx.db, account.id, "web", 12);

  const body = html`
<form id="ask" method="post" action="/agent/send">
<p><label for="agent">Agent</label>
<select id="agent" name="agent">${agents.map((a) => html`<option value="${a.name}"${raw(a.name === chosen ? " selected" : "")}>${a.name}</option>`)}</select></p>
<section id="log" aria-live="polite" aria-label="Conversation">${messages.map((m) =>
    m.role === "refused"
      ? html`<div class="msg tool refused"><p>Not sent: ${m.content}</p></div>`
      : html`<div class="msg ${m.role}"><strong>${m.role === "user" ? "You" : chosen}</strong><p>${m.content}</p></div>`,
  )}</section>
<input type="hidden" name="conversation" value="${conv?.id ?? ""}">
<p><label for="message">Message</label><textarea id="message" name="message" rows="3" required></textarea></p>
<p><button type="submit">Send</button> <a href="/agent">New conversation</a></p>
<noscript><p class="alert">This page needs JavaScript to stream answers; the same agent answers <code>hearth ask</code> and mail to your handle+name.</p></noscript>
</form>
${recent.length ? html`<h2>Recent</h2><ul>${recent.map((c) => html`<li><a href="/agent?c=${encodeURIComponent(c.id)}">${c.topic}</a> <small>${new Date(c.active).toISOString().slice(0, 16).replace("T", " ")}</small></li>`)}</ul>` : html``}`;
  return page({
    title: "Agent",
    body,
    account,
    csrf,
    csp: CSP,
    head: html`<style>.msg{margin:.6rem 0}.msg p{white-space:pre-wrap;margin:.2rem 0}.msg.tool{color:var(--muted);font-size:.9rem}</style><script src="/agent/page.js" defer></script>`,
  });
}

/** A turn as the page shows it: said, answered, or a send refused. */
interface Shown {
  role: "user" | "assistant" | "refused";
  content: string;
}

/** A recorded tool call that was an outbound call refused after reading, as "tool: why"; nothing for any other. */
function refusedSend(content: string): Shown[] {
  const nl = content.indexOf("\n");
  try {
    const error = JSON.parse(content.slice(nl + 1))?.error;
    // Refused outright by the credential, declined by the owner, or left unanswered.
    if (["needed", "declined", "timed_out"].includes(error?.approval)) return [{ role: "refused", content: `${content.slice(0, content.indexOf(" "))}: ${error.message}` }];
  } catch {
    // A result cut to its cap is no refusal: those are short.
  }
  return [];
}

const SCRIPT = `
const form = document.getElementById("ask");
const log = document.getElementById("log");
const csrf = document.querySelector('meta[name="csrf-token"]').content;
function bubble(cls, who, text) {
  const d = document.createElement("div"); d.className = "msg " + cls;
  const s = document.createElement("strong"); s.textContent = who; d.append(s);
  const p = document.createElement("p"); p.textContent = text; d.append(p);
  log.append(d); return p;
}
form.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const message = form.message.value.trim(); if (!message) return;
  const agent = form.agent.value;
  bubble("user", "You", message); form.message.value = "";
  const out = bubble("assistant", agent, "");
  const button = form.querySelector("button"); button.disabled = true;
  try {
    const res = await fetch("/agent/send", { method: "POST", headers: { "content-type": "application/json", "x-csrf-token": csrf },
      body: JSON.stringify({ message, agent, conversation: form.conversation.value || undefined }) });
    if (!res.ok || !res.body) { const b = await res.json().catch(() => null); out.textContent = b && b.error ? b.error.message : "HTTP " + res.status; return; }
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read(); if (done) break;
      buf += value; let nl;
      while ((nl = buf.indexOf("\\n")) >= 0) {
        const line = buf.slice(0, nl); buf = buf.slice(nl + 1); if (!line) continue;
        const e = JSON.parse(line);
        if (e.type === "text") out.textContent += e.text;
        else if (e.type === "tool") bubble("tool", "", e.refused ? "Not sent: " + e.name + ": " + e.refused : (e.ok ? "used " : "tried ") + e.name);
        else if (e.type === "done") { out.textContent = e.result.answer; form.conversation.value = e.result.conversation; history.replaceState(null, "", "/agent?c=" + encodeURIComponent(e.result.conversation)); }
        else if (e.type === "error") out.textContent = e.error.message;
      }
    }
  } finally { button.disabled = false; }
});
`;

export function pageScript(): Response {
  return new Response(SCRIPT, { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-cache" } });
}

/** Reads {message, agent?, conversation?} and streams the run as NDJSON lines. */
export async function sendRoute(req: Request, ctx: AgentCtx): Promise<Response> {
  if (!ctx.caller.account) throw unauthenticated("sign in (or send a token) to talk to your agent");
  let body: Record<string, unknown>;
  try {
    body = (await req.json()) as Record<string, unknown>;
  } catch {
    throw invalid("message", 'send a JSON body: {"message": "...", "agent"?: "...", "conversation"?: "..."}');
  }
  if (typeof body?.message !== "string" || !body.message.trim()) throw invalid("message", "message is required: what to say to the agent");
  const args: Record<string, unknown> = { prompt: body.message };
  for (const k of ["agent", "conversation"]) if (typeof body[k] === "string" && body[k]) args[k] = body[k];
  const caller = ctx.caller;
  const host = ctx.agentHost;
  const enc = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      const emit = (e: unknown) => {
        try {
          c.enqueue(enc.encode(JSON.stringify(e) + "\n"));
        } catch {
          // The browser went away; the run still finishes and is recorded.
        }
      };
      // Started after this route's own transaction has committed, so the run's calls take the write lock as usual.
      setTimeout(async () => {
        try {
          const result = await host.ask(caller, args, { client: "web", onText: (text) => emit({ type: "text", text }), onTool: (name, ok, refused) => emit({ type: "tool", name, ok, ...(refused ? { refused } : {}) }) }, { page: true });
          emit({ type: "done", result });
        } catch (e) {
          const he = asHearthError(e);
          emit({ type: "error", error: { status: he.status, kind: he.kind, message: he.message, ...(he.field ? { field: he.field } : {}) } });
        } finally {
          try {
            c.close();
          } catch {}
        }
      }, 0);
    },
  });
  return new Response(stream, { headers: { "content-type": "application/x-ndjson; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff" } });
}
