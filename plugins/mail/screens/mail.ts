// Mail for the person: the inbox beside the open message, a reply or a new
// message written below it, and their address (and tagged addresses) at hand.
// A message's text is plain text, shown as text (never as markup), so nothing
// in it runs or loads from elsewhere. It calls only mail/inbox, mail/info and
// mail/send, as any client would.
import { call, Empty, Failure, formatDate, html, Loading, navigate, SearchList, toast, useKeys, useParams, useQuery, useState } from "hearth/ui";

export interface Message {
  id: string;
  folder: string;
  from: string;
  to: string;
  tag: string | null;
  subject: string;
  body: string;
  at: string;
  message_id: string;
  in_reply_to: string | null;
}

interface Info {
  handle: string;
  address: string | null;
  outside_mail: boolean;
  tagged_handle?: string;
  tagged_address?: string | null;
}

const STYLE = `
.mail-body{white-space:pre-wrap;overflow-wrap:anywhere;font:inherit;line-height:1.55;margin:1rem 0;padding-top:1rem;border-top:1px solid var(--line)}
.mail-head{margin:0 0 .25rem}.mail-meta{margin:0;color:var(--muted)}.mail-meta dt{display:inline;font-weight:600}.mail-meta dd{display:inline;margin:0 .75rem 0 .25rem;overflow-wrap:anywhere}
.mail-tag{display:inline-block;border:1px solid var(--line);border-radius:1rem;padding:0 .5rem;font-size:.85rem;color:var(--fg)}
.compose textarea{min-height:12rem;width:100%}.compose input{width:100%}
.address{overflow-wrap:anywhere}
.addresses summary{padding:.7rem 0;cursor:pointer}
.mail-bar{flex-wrap:nowrap}.mail-bar select{width:auto;flex:1;min-width:0}
`;

const WHEN: Intl.DateTimeFormatOptions = { dateStyle: "medium", timeStyle: "short" };
const when = (iso: string) => formatDate(iso, WHEN);
/** The mailbox in "Name <addr>" or "addr": where a reply goes. */
const mailbox = (from: string) => (/<([^<>]+)>\s*$/.exec(from)?.[1] ?? from).trim();
const who = (from: string) => (/^\s*"?([^"<]+?)"?\s*</.exec(from)?.[1] ?? from).trim();
const reSubject = (s: string) => (/^\s*re\s*:/i.test(s) ? s : `Re: ${s}`);
const quoted = (m: Message) => `\n\nOn ${when(m.at)}, ${who(m.from)} wrote:\n${m.body.replace(/\s+$/, "").split("\n").map((l) => `> ${l}`).join("\n")}\n`;

export default function Mail() {
  const params = useParams();
  const open = params.get("open");
  const replying = params.get("reply");
  const writing = params.has("new");
  const tag = params.get("tag");
  const inbox = useQuery<Message[]>("mail/inbox", { limit: 100 });
  const info = useQuery<Info>("mail/info", {});
  const back = () => navigate({ open: null, new: null, reply: null });
  useKeys([
    { key: "c", does: "Write a new message", run: () => navigate({ new: "1", open: null, reply: null }) },
    { key: "r", does: "Reply to the open message", run: () => open && navigate({ reply: open, new: null }) },
    { key: "Escape", does: "Back to the inbox (on a phone)", run: back },
  ]);
  if (inbox.data === undefined)
    return inbox.error ? html`<${Failure} error=${inbox.error} retry=${inbox.reload} />` : html`<${Loading} label="Loading your mail…" />`;
  const all = inbox.data;
  const list = tag ? all.filter((m) => m.tag === tag) : all;
  const tags = [...new Set(all.map((m) => m.tag).filter((t): t is string => !!t))].sort();
  const current = open === null ? null : (all.find((m) => m.id === open) ?? null);
  const answering = replying === null ? null : (all.find((m) => m.id === replying) ?? null);
  const editing = writing || open !== null || replying !== null;
  return html`<style>${STYLE}</style>
  <div class=${`split${editing ? " editing" : ""}`}>
    <section class="pane list" aria-label="Inbox">
      <div class="row spread mail-bar">
        ${tags.length
          ? html`<label class="visually-hidden" for="mail-tag">Show mail to</label>
            <select id="mail-tag" value=${tag ?? ""} onChange=${(e: Event) => navigate({ tag: (e.target as HTMLSelectElement).value || null })}>
              <option value="">All mail</option>
              ${tags.map((t) => html`<option value=${t}>+${t}</option>`)}
            </select>`
          : html`<span></span>`}
        <button type="button" onClick=${() => navigate({ new: "1", open: null, reply: null })} aria-keyshortcuts="c">Write</button>
      </div>
      <${SearchList}
        items=${list}
        label="Search mail"
        searchId="mail-search"
        keyOf=${(m: Message) => m.id}
        title=${(m: Message) => m.subject || "(no subject)"}
        detail=${(m: Message) => `${who(m.from)} · ${when(m.at)}${m.tag ? ` · +${m.tag}` : ""}`}
        text=${(m: Message) => `${m.subject} ${m.from} ${m.body}`}
        selected=${open ?? replying}
        onOpen=${(m: Message) => navigate({ open: m.id, new: null, reply: null })}
        empty=${html`<${Empty} title=${tag ? `No mail to +${tag}` : "No mail yet"}><p>Mail sent to your address arrives here.</p></${Empty}>`}
      />
      <${Addresses} info=${info.data} />
    </section>
    <section class="pane editor" aria-label="Message">
      ${
        writing
          ? html`<${Compose} key="new" back=${back} />`
          : replying !== null
            ? answering
              ? html`<${Compose} key=${`re-${answering.id}`} to=${mailbox(answering.from)} subject=${reSubject(answering.subject)} body=${quoted(answering)} back=${() => navigate({ reply: null, open: answering.id })} />`
              : html`<${Empty} title="This message is gone"><p>It is no longer in your inbox.</p></${Empty}>`
            : current
              ? html`<${Read} m=${current} />`
              : open !== null
                ? html`<${Empty} title="This message is gone"><p>It is no longer in your inbox.</p></${Empty}>`
                : html`<${Empty} title="No message open"><p>Pick a message from the inbox, or write one (<kbd>c</kbd>).</p></${Empty}>`
      }
    </section>
  </div>`;
}

function Read({ m }: { m: Message }) {
  return html`<article class="message">
    <div class="row spread toolbar">
      <button type="button" class="quiet back" onClick=${() => navigate({ open: null })}>← Inbox</button>
      <button type="button" onClick=${() => navigate({ reply: m.id, open: null })} aria-keyshortcuts="r">Reply</button>
    </div>
    <h2 class="mail-head">${m.subject || "(no subject)"}</h2>
    <dl class="mail-meta">
      <dt>From</dt><dd>${m.from}</dd>
      <dt>To</dt><dd>${m.to}</dd>
      <dt>Date</dt><dd>${when(m.at)}</dd>
      ${m.tag && html`<dt>Tag</dt><dd><span class="mail-tag">+${m.tag}</span></dd>`}
    </dl>
    <div class="mail-body">${m.body}</div>
  </article>`;
}

function Compose(p: { to?: string; subject?: string; body?: string; back: () => void }) {
  const [to, setTo] = useState(p.to ?? "");
  const [subject, setSubject] = useState(p.subject ?? "");
  const [body, setBody] = useState(p.body ?? "");
  const [sending, setSending] = useState(false);
  const [refusal, setRefusal] = useState<{ field?: string; message: string } | null>(null);
  const send = async () => {
    if (sending) return;
    setSending(true);
    setRefusal(null);
    try {
      const r = await call<{ delivery?: string }>("mail/send", { to: to.trim(), subject, body });
      toast(r?.delivery === "queued" ? `On its way to ${to.trim()}` : `Sent to ${to.trim()}`);
      p.back();
    } catch (e) {
      const err = e as { field?: string; message: string };
      setRefusal({ field: err.field, message: err.message });
    } finally {
      setSending(false);
    }
  };
  useKeys([{ key: "Mod+Enter", does: "Send", run: () => void send() }]);
  const outside = to.includes("@");
  const note = (field: string) => refusal && refusal.field === field ? html`<p class="alert" id=${`mail-${field}-error`}>${refusal.message}</p>` : null;
  return html`<form class="compose" onSubmit=${(e: Event) => (e.preventDefault(), void send())}>
    <div class="row spread toolbar">
      <button type="button" class="quiet back" onClick=${p.back}>← Back</button>
      <h2 class="pane-title">${p.to ? "Reply" : "New message"}</h2>
    </div>
    <label for="mail-to">To</label>
    <input id="mail-to" type="text" autocomplete="email" value=${to} autoFocus=${!p.to} aria-describedby="mail-to-hint"
      onInput=${(e: Event) => setTo((e.target as HTMLInputElement).value)} />
    <p class="hint" id="mail-to-hint">${outside ? "An outside address: sending spends a few credits." : "A username here (free), or a full email address."}</p>
    ${note("to")}
    <label for="mail-subject">Subject</label>
    <input id="mail-subject" type="text" value=${subject} onInput=${(e: Event) => setSubject((e.target as HTMLInputElement).value)} />
    ${note("subject")}
    <label for="mail-body">Message</label>
    <textarea id="mail-body" rows="12" value=${body} autoFocus=${!!p.to} onInput=${(e: Event) => setBody((e.target as HTMLTextAreaElement).value)}></textarea>
    ${note("body")}
    ${refusal && !["to", "subject", "body"].includes(refusal.field ?? "") ? html`<p class="alert" role="alert">Not sent: ${refusal.message}</p>` : null}
    <div class="row end"><button type="submit" disabled=${sending || !to.trim()} aria-keyshortcuts="Control+Enter">${sending ? "Sending…" : "Send"}</button></div>
  </form>`;
}

function Addresses({ info }: { info: Info | undefined }) {
  const [tag, setTag] = useState("");
  const [made, setMade] = useState<Info | null>(null);
  const [why, setWhy] = useState<string | null>(null);
  if (!info) return null;
  const make = async () => {
    setWhy(null);
    try {
      setMade(await call<Info>("mail/info", { tag: tag.trim() }));
    } catch (e) {
      setWhy((e as Error).message);
    }
  };
  return html`<details class="addresses">
    <summary>Your address</summary>
    <p class="address"><strong>${info.address ?? info.handle}</strong>${info.address ? "" : " (a username: mail between accounts here)"}</p>
    <form class="row" onSubmit=${(e: Event) => (e.preventDefault(), void make())}>
      <label for="mail-new-tag">Tag for a separate address</label>
      <input id="mail-new-tag" type="text" value=${tag} placeholder="shop" onInput=${(e: Event) => setTag((e.target as HTMLInputElement).value)} />
      <button type="submit" class="quiet" disabled=${!tag.trim()}>Show address</button>
    </form>
    ${why && html`<p class="alert">${why}</p>`}
    ${made && html`<p class="address" role="status">Mail to <strong>${made.tagged_address ?? made.tagged_handle}</strong> arrives here under +${tag.trim().toLowerCase()}.</p>`}
  </details>`;
}
