// Documents for the person: a searchable list beside the open document,
// Markdown with a preview, saved as they pause typing, private until they
// make it public (then its address to copy), deleted with an Undo that writes
// the held copy back. It calls only docs/list, docs/read, docs/write and
// docs/delete, as any client would.
import { call, confirm, Empty, Failure, formatDate, html, Loading, MarkdownEditor, navigate, SearchList, toast, undoable, useAutosave, useEffect, useKeys, useParams, useQuery, useRef, useState } from "hearth/ui";

interface Summary {
  id: string;
  title: string;
  snippet: string;
  public: boolean;
  url: string | null;
  updated: string;
}
interface Doc extends Summary {
  content: string;
  created: string;
}

const when = (iso: string) => formatDate(iso, { dateStyle: "medium", timeStyle: "short" });

export default function Documents() {
  const params = useParams();
  const open = params.get("open");
  const creating = params.has("new");
  const docs = useQuery<Summary[]>("docs/list", { limit: 500 });
  // A first save names the new document: the editor stays while the address takes its id.
  const adopted = useRef<string | null>(null);
  const editorKey = useRef({ open, creating, n: 0 });
  const own = adopted.current !== null && open === adopted.current;
  if (!own) {
    adopted.current = null;
    if (editorKey.current.open !== open || editorKey.current.creating !== creating) editorKey.current = { open, creating, n: editorKey.current.n + 1 };
  }
  const adopt = (id: string) => {
    adopted.current = id;
    navigate({ open: id, new: null }, { replace: true });
  };
  useKeys([
    { key: "n", does: "New document", run: () => navigate({ new: "1", open: null }) },
    { key: "Escape", does: "Back to the list (on a phone)", run: () => navigate({ open: null, new: null }) },
  ]);
  if (docs.data === undefined) return docs.error ? html`<${Failure} error=${docs.error} retry=${docs.reload} />` : html`<${Loading} label="Loading your documents…" />`;
  const editing = creating || open !== null;
  return html`<div class=${`split${editing ? " editing" : ""}`}>
    <section class="pane list" aria-label="Your documents">
      <div class="row end"><button type="button" onClick=${() => navigate({ new: "1", open: null })} aria-keyshortcuts="n">New document</button></div>
      <${SearchList}
        items=${docs.data}
        label="Search documents"
        searchId="doc-search"
        keyOf=${(d: Summary) => d.id}
        title=${(d: Summary) => d.title}
        detail=${(d: Summary) => `${d.public ? "Public · " : ""}${when(d.updated)}`}
        text=${(d: Summary) => `${d.title} ${d.snippet}`}
        selected=${open}
        onOpen=${(d: Summary) => navigate({ open: d.id, new: null })}
        empty=${html`<${Empty} title="No documents yet"><p>Write one with <strong>New document</strong> (or press <kbd>n</kbd>).</p></${Empty}>`}
      />
    </section>
    <section class="pane editor" aria-label="Document">
      ${
        creating || own
          ? html`<${Editor} key=${editorKey.current.n} doc=${null} adopt=${adopt} />`
          : open !== null
            ? html`<${Opened} key=${editorKey.current.n} id=${open} adopt=${adopt} />`
            : html`<${Empty} title="No document open"><p>Pick a document from the list, or write a new one.</p></${Empty}>`
      }
    </section>
  </div>`;
}

function Opened({ id, adopt }: { id: string; adopt: (id: string) => void }) {
  const doc = useQuery<Doc>("docs/read", { id });
  if (doc.data === undefined)
    return doc.error
      ? (doc.error as { status?: number }).status === 404
        ? html`<${Empty} title="This document is gone"><p>It was deleted, or is not yours.</p></${Empty}>`
        : html`<${Failure} error=${doc.error} retry=${doc.reload} />`
      : html`<${Loading} />`;
  return html`<${Editor} doc=${doc.data} adopt=${adopt} />`;
}

function Editor({ doc, adopt }: { doc: Doc | null; adopt: (id: string) => void }) {
  const id = useRef<string | null>(doc?.id ?? null);
  const [title, setTitle] = useState(doc?.title ?? "");
  const [content, setContent] = useState(doc?.content ?? "");
  const [shared, setShared] = useState<{ public: boolean; url: string | null }>({ public: doc?.public ?? false, url: doc?.url ?? null });
  const typed = useRef({ title, content, public: shared.public });
  typed.current = { title, content, public: shared.public };
  const chain = useRef<Promise<unknown>>(Promise.resolve());
  const serial = <R,>(fn: () => Promise<R>): Promise<R> => {
    const run = chain.current.then(fn);
    chain.current = run.catch(() => {});
    return run;
  };
  // docs/write replaces title, content and visibility together: each save sends all three as they are now.
  const write = () =>
    serial(async () => {
      const t = typed.current.title.trim();
      if (!t) throw new Error("give the document a title to save it");
      const saved = await call<Doc>("docs/write", { title: t, content: typed.current.content, public: typed.current.public, ...(id.current ? { id: id.current } : {}) });
      setShared({ public: saved.public, url: saved.url });
      if (id.current === null) {
        id.current = saved.id;
        adopt(saved.id);
      }
      return saved;
    });
  const autosave = useAutosave("doc", { title, content }, write);
  // Someone else's change (another tab, the agent) shows here when nothing typed is waiting to be saved.
  useEffect(() => {
    if (!doc || (doc.content === typed.current.content && doc.title === typed.current.title) || autosave.dirty || autosave.status === "Saving…") return;
    autosave.accept({ title: doc.title, content: doc.content });
    setTitle(doc.title);
    setContent(doc.content);
    setShared({ public: doc.public, url: doc.url });
  }, [doc?.updated]);
  const setPublic = async (on: boolean) => {
    const before = shared;
    setShared({ ...shared, public: on });
    typed.current.public = on;
    try {
      await write();
      toast(on ? "Published: anyone with the address can read it" : "Private again: only you can read it");
    } catch (e) {
      setShared(before);
      toast(`Not ${on ? "published" : "made private"}: ${(e as Error).message}`, { kind: "error" });
    }
  };
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(shared.url!);
      toast("Address copied");
    } catch {
      toast("Could not copy: select the address and copy it", { kind: "error" });
    }
  };
  const remove = async () => {
    await autosave.flush();
    if (id.current === null) return navigate({ new: null });
    const held = { title: typed.current.title.trim() || "Untitled", content: typed.current.content, public: typed.current.public };
    if (!(await confirm({ title: `Delete “${held.title}”?`, message: held.public ? "It is public: its address stops working. You can undo this for a few seconds after." : "You can undo this for a few seconds after.", confirm: "Delete", danger: true }))) return;
    try {
      await call("docs/delete", { id: id.current });
    } catch (e) {
      return void toast(`Not deleted: ${(e as Error).message}`, { kind: "error" });
    }
    navigate({ open: null });
    undoable(`Deleted “${held.title}”`, async () => {
      const back = await call<Doc>("docs/write", held);
      navigate({ open: back.id });
    });
  };
  useKeys([{ key: "Mod+s", does: "Save now", run: () => void autosave.flush() }]);
  return html`<div class="doc">
    <div class="row spread toolbar">
      <button type="button" class="quiet back" onClick=${() => navigate({ open: null, new: null })}>← All documents</button>
      <span class=${`save-status${autosave.failed ? " bad" : ""}`} role="status">${autosave.status}</span>
      <button type="button" class="quiet" onClick=${remove}>Delete</button>
    </div>
    <label for="doc-title">Title</label>
    <input id="doc-title" type="text" class="title-field" value=${title} autoFocus=${doc === null} onInput=${(e: Event) => setTitle((e.target as HTMLInputElement).value)} />
    <label class="choice"><input type="checkbox" checked=${shared.public} disabled=${id.current === null && !title.trim()} onChange=${(e: Event) => void setPublic((e.target as HTMLInputElement).checked)} /> Public: anyone with its address can read it</label>
    ${shared.public && shared.url && html`<p class="row public-url"><a href=${shared.url} target="_blank" rel="noopener">${shared.url}</a><button type="button" class="quiet" onClick=${copy}>Copy address</button></p>`}
    <${MarkdownEditor} id="doc-text" label="Content" value=${content} onInput=${setContent} />
    ${doc && html`<p class="hint">Written ${when(doc.created)}; changed ${when(doc.updated)}.</p>`}
  </div>`;
}
