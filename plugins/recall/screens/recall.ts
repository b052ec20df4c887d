// Past conversations with the agent, on the web, by mail and on the command
// line: the most recent first beside the one open, searched across every
// message as one types (recall/search, the words it matched marked), one
// client or all. A found message opens its conversation at that message.
// What the agent says next appears without a reload: a conversation is
// recorded by agent/ask, so its notices reload the lists. It calls only
// recall/list, recall/search and recall/conversation.
import { Empty, Failure, formatDate, html, Loading, navigate, useEffect, useKeys, useParams, useQuery, useRef, useState } from "hearth/ui";

interface Conversation {
  id: string;
  client: "web" | "mail" | "cli";
  agent: string;
  topic: string;
  started: string;
  active: string;
  messages: number;
}
interface Hit {
  conversation: string;
  message: string;
  client: Conversation["client"];
  topic: string;
  role: string;
  at: string;
  snippet: string;
}
interface Message {
  id: string;
  role: "user" | "assistant" | "tool";
  content: string;
  at: string;
}

const CLIENTS = [
  { value: "", label: "Every client" },
  { value: "web", label: "On the web" },
  { value: "mail", label: "By mail" },
  { value: "cli", label: "On the command line" },
];
const CLIENT_NAMES: Record<string, string> = { web: "Web", mail: "Mail", cli: "Command line" };
const WHO: Record<string, string> = { user: "You", assistant: "Agent", tool: "Tool" };
const when = (iso: string) => formatDate(iso, { dateStyle: "medium", timeStyle: "short" });
/** Conversations are written by the agent's service; a notice from either reloads what is shown. */
const SERVICES = ["recall", "agent"];

const STYLE = `
.recall-filters{display:grid;gap:.5rem;margin:0 0 .5rem}
.recall-filters input,.recall-filters select{width:100%;max-width:none;min-height:2.75rem;font:inherit;padding:.5rem .7rem;border:1px solid var(--muted);border-radius:.4rem;background:var(--field);color:var(--fg)}
.search-list .item .snippet{font-size:.93rem;overflow-wrap:anywhere}
.search-list mark,.messages mark{background:color-mix(in srgb,var(--accent) 25%,transparent);color:inherit;border-radius:.2rem;padding:0 .1rem}
.messages{list-style:none;margin:.75rem 0 0;padding:0;display:flex;flex-direction:column;gap:.75rem}
.messages li{border:1px solid var(--line);border-radius:.6rem;padding:.5rem .75rem;background:var(--field)}
.messages li.user{border-left:4px solid var(--accent)}
.messages li.found{box-shadow:0 0 0 3px var(--accent)}
.messages .who{display:flex;justify-content:space-between;gap:1rem;font-size:.9rem;color:var(--muted);margin:0 0 .25rem}
.messages .who strong{color:var(--fg)}
.messages .text{white-space:pre-wrap;overflow-wrap:anywhere;margin:0}
.conversation-meta{color:var(--muted);margin:.25rem 0 0}
`;

/** A snippet with the words recall/search marked in **bold** shown as marks; everything else as text. */
function marked(snippet: string) {
  return snippet.split(/\*\*(.+?)\*\*/g).map((part, i) => (i % 2 ? html`<mark>${part}</mark>` : part));
}

export default function Recall() {
  const params = useParams();
  const query = params.get("q") ?? "";
  const client = params.get("client") ?? "";
  const open = params.get("open");
  const [typed, setTyped] = useState(query);
  // What this screen last put in the address: only a search changed from elsewhere (the back button) replaces what is typed,
  // or letters typed while the address caught up with the first ones would be lost.
  const pushed = useRef(query);
  const search = (text: string) => {
    pushed.current = text.trim() ? text : "";
    navigate({ q: pushed.current || null }, { replace: true });
  };
  // The address follows what is typed once the person pauses, so the back button returns to a search and each letter is not a request.
  useEffect(() => {
    if (typed === query) return;
    const t = setTimeout(() => search(typed), 250);
    return () => clearTimeout(t);
  }, [typed]);
  useEffect(() => {
    if (query !== pushed.current) setTyped((pushed.current = query));
  }, [query]);
  const filter = client ? { client } : {};
  const list = useQuery<Conversation[]>("recall/list", { limit: 200, ...filter }, { services: SERVICES });
  const hits = useQuery<Hit[]>("recall/search", { query, limit: 50, ...filter }, { services: SERVICES, skip: !query.trim() });
  const back = () => navigate({ open: null, m: null });
  useKeys([
    { key: "s", does: "Search conversations", run: () => document.getElementById("recall-search")?.focus() },
    { key: "Escape", does: "Back to the list (on a phone)", run: back },
  ]);
  const searching = query.trim() !== "";
  const shown = searching ? hits : list;
  // Until the list's first answer, one notice for the whole screen, as every screen starts: the screen's parts
  // each showing a Loading of their own at once (the list and the conversation beside it) broke the page.
  if (list.data === undefined && !list.error) return html`<${Loading} label="Loading your conversations…" />`;
  return html`<style>${STYLE}</style>
  <div class=${`split${open ? " editing" : ""}`}>
    <section class="pane list" aria-label="Conversations">
      <form class="recall-filters" role="search" aria-label="Search conversations" onSubmit=${(e: Event) => { e.preventDefault(); search(typed); }}>
        <label class="visually-hidden" for="recall-search">Search conversations</label>
        <input id="recall-search" type="search" placeholder="Search conversations" value=${typed} autocomplete="off" aria-keyshortcuts="s"
          onInput=${(e: Event) => setTyped((e.target as HTMLInputElement).value)} />
        <label class="visually-hidden" for="recall-client">Client</label>
        <select id="recall-client" value=${client} onChange=${(e: Event) => navigate({ client: (e.target as HTMLSelectElement).value || null }, { replace: true })}>
          ${CLIENTS.map((c) => html`<option value=${c.value}>${c.label}</option>`)}
        </select>
      </form>
      <div class="search-list">
        ${shown.data === undefined
          ? shown.error
            ? html`<${Failure} error=${shown.error} retry=${shown.reload} />`
            : html`<p class="state" role="status">Searching…</p>`
          : searching
            ? html`<${Hits} hits=${hits.data ?? []} query=${query} open=${open} />`
            : html`<${Conversations} list=${list.data ?? []} open=${open} filtered=${client !== ""} />`}
      </div>
    </section>
    <section class="pane editor" aria-label="Conversation">
      ${open
        ? html`<${Opened} key=${open} id=${open} message=${params.get("m")} back=${back} />`
        : html`<${Empty} title="No conversation open"><p>Pick one from the list, or search what you and the agent said.</p></${Empty}>`}
    </section>
  </div>`;
}

function Conversations({ list, open, filtered }: { list: Conversation[]; open: string | null; filtered: boolean }) {
  if (!list.length)
    return html`<${Empty} title=${filtered ? "None on this client" : "No conversations yet"}><p>What you ask the agent (on the web, by mail or with <code>hearth ask</code>) is kept here.</p></${Empty}>`;
  return html`<ul class="items" aria-label="Conversations, most recent first">
    ${list.map((c) => {
      const on = c.id === open;
      return html`<li key=${c.id}><button type="button" class=${`item${on ? " on" : ""}`} aria-current=${on ? "true" : undefined} onClick=${() => navigate({ open: c.id, m: null })}>
        <span class="item-title">${c.topic || "Untitled"}</span>
        <span class="item-detail">${CLIENT_NAMES[c.client] ?? c.client} · ${c.messages} message${c.messages === 1 ? "" : "s"} · ${when(c.active)}</span>
      </button></li>`;
    })}
  </ul>`;
}

function Hits({ hits, query, open }: { hits: Hit[]; query: string; open: string | null }) {
  if (!hits.length) return html`<p class="state" role="status">Nothing said matches “${query}”.</p>`;
  return html`<div><p class="visually-hidden" role="status">${hits.length} message${hits.length === 1 ? "" : "s"} found</p>
    <ul class="items" aria-label="Messages found, most recent first">
    ${hits.map((h) => {
      const on = h.conversation === open;
      return html`<li key=${h.message}><button type="button" class=${`item${on ? " on" : ""}`} aria-current=${on ? "true" : undefined} onClick=${() => navigate({ open: h.conversation, m: h.message })}>
        <span class="item-title">${h.topic || "Untitled"}</span>
        <span class="snippet">${marked(h.snippet)}</span>
        <span class="item-detail">${WHO[h.role] ?? h.role} · ${CLIENT_NAMES[h.client] ?? h.client} · ${when(h.at)}</span>
      </button></li>`;
    })}
  </ul></div>`;
}

function Opened({ id, message, back }: { id: string; message: string | null; back: () => void }) {
  const c = useQuery<Omit<Conversation, "messages"> & { shown: number; messages: Message[] }>("recall/conversation", { id, limit: 1000 }, { services: SERVICES });
  const at = c.data?.messages.length ?? 0;
  // A message found by a search is brought into view once the conversation is drawn.
  useEffect(() => {
    if (message && at > 0) document.getElementById(`msg-${message}`)?.scrollIntoView({ block: "center" });
  }, [message, at > 0]);
  if (c.data === undefined) return c.error ? html`<${Failure} error=${c.error} retry=${c.reload} />` : html`<${Loading} label="Loading the conversation…" />`;
  const conv = c.data;
  return html`<article aria-labelledby="conversation-title">
    <div class="row spread toolbar"><button type="button" class="quiet back" onClick=${back}>← All conversations</button></div>
    <h2 id="conversation-title" class="pane-title">${conv.topic || "Untitled"}</h2>
    <p class="conversation-meta">${CLIENT_NAMES[conv.client] ?? conv.client} · started ${when(conv.started)} · ${conv.shown} message${conv.shown === 1 ? "" : "s"}</p>
    <ol class="messages" aria-label="Messages, oldest first">
      ${conv.messages.map(
        (m) => html`<li key=${m.id} id=${`msg-${m.id}`} class=${`${m.role}${m.id === message ? " found" : ""}`} aria-current=${m.id === message ? "true" : undefined}>
          <p class="who"><strong>${WHO[m.role] ?? m.role}</strong><time datetime=${m.at}>${when(m.at)}</time></p>
          <p class="text">${m.content}</p>
        </li>`,
      )}
    </ol>
  </article>`;
}
