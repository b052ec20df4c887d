// Chat rooms: the busy rooms beside the open one, its conversation following
// along as others write (the room's own event stream, /chat/<room>/live,
// which replays what came since the last message it saw), and a line to
// write in. Messages are text, shown as text. It calls chat/rooms,
// chat/messages and chat/send.
import { call, Empty, Failure, formatDate, html, Loading, navigate, SearchList, useEffect, useKeys, useParams, useQuery, useRef, useState } from "hearth/ui";

interface Room {
  room: string;
  messages: number;
  last_message_at: string;
}
interface Message {
  id: number;
  room: string;
  author: string;
  content: string;
  at: string;
}

const STYLE = `
.chat-log{list-style:none;margin:0;padding:0;max-height:60vh;overflow-y:auto;border-top:1px solid var(--line)}
.chat-log li{padding:.5rem 0;border-bottom:1px solid var(--line)}
.chat-log .who{font-weight:600}.chat-log time{color:var(--muted);font-size:.85rem;margin-left:.5rem}
.chat-log p{margin:.2rem 0 0;white-space:pre-wrap;overflow-wrap:anywhere}
.chat-open{flex-wrap:nowrap;margin-bottom:.5rem}.chat-open input{flex:1;min-width:0;width:auto}
.chat-write{display:flex;gap:.5rem;align-items:flex-end;margin-top:1rem}.chat-write textarea{flex:1;min-height:2.75rem}
`;
const when = (iso: string) => formatDate(iso, { hour: "2-digit", minute: "2-digit" });
const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

export default function Chat() {
  const params = useParams();
  const open = params.get("room");
  const rooms = useQuery<Room[]>("chat/rooms", { limit: 100 });
  const [name, setName] = useState("");
  useKeys([{ key: "Escape", does: "Back to the rooms (on a phone)", run: () => navigate({ room: null }) }]);
  if (rooms.data === undefined) return rooms.error ? html`<${Failure} error=${rooms.error} retry=${rooms.reload} />` : html`<${Loading} label="Loading the rooms…" />`;
  const slug = name.trim().toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+/, "");
  return html`<style>${STYLE}</style>
  <div class=${`split${open ? " editing" : ""}`}>
    <section class="pane list" aria-label="Rooms">
      <form class="row chat-open" onSubmit=${(e: Event) => (e.preventDefault(), SLUG.test(slug) && navigate({ room: slug }))}>
        <label class="visually-hidden" for="chat-room-name">Open or start a room</label>
        <input id="chat-room-name" type="text" placeholder="Room, e.g. general" value=${name} onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} />
        <button type="submit" class="quiet" disabled=${!SLUG.test(slug)}>Open</button>
      </form>
      <${SearchList}
        items=${rooms.data}
        label="Search rooms"
        searchId="room-search"
        keyOf=${(r: Room) => r.room}
        title=${(r: Room) => `#${r.room}`}
        detail=${(r: Room) => `${r.messages} today · last at ${when(r.last_message_at)}`}
        selected=${open}
        onOpen=${(r: Room) => navigate({ room: r.room })}
        empty=${html`<${Empty} title="No one has talked today"><p>Open a room by name to start one.</p></${Empty}>`}
      />
    </section>
    <section class="pane editor" aria-label="Conversation">
      ${open ? html`<${Conversation} key=${open} room=${open} />` : html`<${Empty} title="No room open"><p>Pick a room, or open one by name.</p></${Empty}>`}
    </section>
  </div>`;
}

function Conversation({ room }: { room: string }) {
  const [log, setLog] = useState<Message[] | null>(null);
  const [gone, setGone] = useState<string | null>(null);
  const [text, setText] = useState("");
  const [why, setWhy] = useState<string | null>(null);
  const end = useRef<HTMLLIElement>(null);
  const follow = useRef<(since: number) => void>(() => {});
  const add = (ms: Message[]) => setLog((l) => {
    const have = new Map((l ?? []).map((m) => [m.id, m]));
    for (const m of ms) have.set(m.id, m);
    return [...have.values()].sort((a, b) => a.id - b.id);
  });
  useEffect(() => {
    let source: EventSource | null = null;
    let stopped = false;
    call<Message[]>("chat/messages", { room }).then(
      (ms) => {
        if (stopped) return;
        add(ms);
        listen(ms.at(-1)?.id ?? 0);
      },
      (e: { status?: number; message: string }) => (e.status === 404 ? setLog([]) : setGone(e.message)),
    );
    // The room's stream replays what came after `since`, then follows; a new room has none until its first message.
    const listen = (since: number) => {
      if (stopped) return;
      source = new EventSource(`/chat/${encodeURIComponent(room)}/live?since=${since}`);
      source.addEventListener("message", (ev) => add([JSON.parse((ev as MessageEvent).data) as Message]));
    };
    follow.current = listen;
    return () => {
      stopped = true;
      source?.close();
    };
  }, [room]);
  useEffect(() => end.current?.scrollIntoView({ block: "nearest" }), [log?.length]);
  const send = async () => {
    const content = text;
    if (!content.trim()) return;
    setWhy(null);
    try {
      const first = log !== null && log.length === 0;
      const m = await call<Message>("chat/send", { room, content });
      setText("");
      add([m]);
      // The first message made the room: now it has a stream to follow.
      if (first) follow.current(m.id);
    } catch (e) {
      setWhy((e as Error).message);
    }
  };
  if (gone) return html`<${Failure} error=${{ message: gone }} />`;
  if (log === null) return html`<${Loading} />`;
  return html`<div class="conversation">
    <div class="row spread toolbar">
      <button type="button" class="quiet back" onClick=${() => navigate({ room: null })}>← Rooms</button>
      <h2 class="pane-title">#${room}</h2>
      <a href=${`/chat/${room}`}>Its page</a>
    </div>
    ${log.length === 0
      ? html`<${Empty} title="Nothing said yet"><p>Your first message starts the room.</p></${Empty}>`
      : html`<ol class="chat-log" aria-live="polite" aria-label=${`Messages in #${room}`}>
          ${log.map((m) => html`<li key=${m.id}><span class="who">${m.author}</span><time datetime=${m.at}>${when(m.at)}</time><p>${m.content}</p></li>`)}
          <li ref=${end} aria-hidden="true" style="border:0;padding:0"></li>
        </ol>`}
    <form class="chat-write" onSubmit=${(e: Event) => (e.preventDefault(), void send())}>
      <label class="visually-hidden" for="chat-text">Message</label>
      <textarea id="chat-text" rows="1" value=${text} placeholder=${`Message #${room}`}
        onInput=${(e: Event) => setText((e.target as HTMLTextAreaElement).value)}
        onKeyDown=${(e: KeyboardEvent) => e.key === "Enter" && !e.shiftKey && (e.preventDefault(), void send())}></textarea>
      <button type="submit" disabled=${!text.trim()}>Send</button>
    </form>
    ${why && html`<p class="alert" role="alert">${why}</p>`}
  </div>`;
}
