// Notes for the person: a searchable list beside the open note, Markdown with
// a preview, saved as they pause typing, deleted with an Undo. It calls only
// notes/list, notes/add and notes/delete, as any client would.
import { call, confirm, Empty, Failure, formatDate, html, Loading, MarkdownEditor, navigate, SearchList, toast, undoable, useAutosave, useEffect, useKeys, useParams, useQuery, useRef, useState } from "hearth/ui";

export interface Note {
  title: string;
  text: string;
  created: string;
  updated: string;
}

const when = (iso: string) => formatDate(iso, { dateStyle: "medium", timeStyle: "short" });
const firstLine = (text: string) => text.replace(/[#*_>`[\]-]/g, "").trim().split("\n")[0]?.slice(0, 80) ?? "";

export default function Notes() {
  const params = useParams();
  const open = params.get("open");
  const creating = params.has("new");
  const notes = useQuery<Note[]>("notes/list", {}, { all: true });
  const editor = useRef({ open, creating, key: 0, own: false });
  const retitled = useRef<string | null>(null);
  const retitle = (t: string) => {
    retitled.current = t;
    navigate({ open: t, new: null }, { replace: true });
    void notes.reload();
  };
  useKeys([
    { key: "n", does: "New note", run: () => navigate({ new: "1", open: null }) },
    { key: "Escape", does: "Back to the list (on a phone)", run: () => navigate({ open: null, new: null }) },
  ]);
  if (notes.data === undefined) return notes.error ? html`<${Failure} error=${notes.error} retry=${notes.reload} />` : html`<${Loading} label="Loading your notes…" />`;
  const list = [...notes.data].sort((a, b) => b.updated.localeCompare(a.updated));
  const current = open === null ? null : (list.find((n) => n.title === open) ?? null);
  // The editor stays the same while it renames (or first saves) its own note, and is a new one when the person opens another.
  const shown = editor.current;
  if (retitled.current !== null && open === retitled.current) Object.assign(shown, { open, creating, own: true });
  else if (shown.open !== open || shown.creating !== creating) editor.current = { open, creating, key: shown.key + 1, own: false };
  retitled.current = null;
  const editing = creating || open !== null;
  return html`<div class=${`split${editing ? " editing" : ""}`}>
    <section class="pane list" aria-label="Your notes">
      <div class="row end"><button type="button" onClick=${() => navigate({ new: "1", open: null })} aria-keyshortcuts="n">New note</button></div>
      <${SearchList}
        items=${list}
        label="Search notes"
        searchId="note-search"
        keyOf=${(n: Note) => n.title}
        title=${(n: Note) => n.title}
        detail=${(n: Note) => `${when(n.updated)}${firstLine(n.text) ? ` · ${firstLine(n.text)}` : ""}`}
        text=${(n: Note) => `${n.title} ${n.text}`}
        selected=${open}
        onOpen=${(n: Note) => navigate({ open: n.title, new: null })}
        empty=${html`<${Empty} title="No notes yet"><p>Write one with <strong>New note</strong> (or press <kbd>n</kbd>).</p></${Empty}>`}
      />
    </section>
    <section class="pane editor" aria-label="Note">
      ${
        creating || current || (editor.current.own && editor.current.open === open)
          ? html`<${Editor} key=${editor.current.key} note=${current} all=${list} reload=${notes.reload} retitle=${retitle} />`
          : open !== null && !notes.loading
            ? html`<${Empty} title="This note is gone"><p>No note is titled “${open}” now: it was renamed or deleted.</p></${Empty}>`
            : open !== null
              ? html`<${Loading} />`
              : html`<${Empty} title="No note open"><p>Pick a note from the list, or write a new one.</p></${Empty}>`
      }
    </section>
  </div>`;
}

function Editor({ note, all, reload, retitle }: { note: Note | null; all: Note[]; reload: () => Promise<void>; retitle: (title: string) => void }) {
  // The title is the note's key: it is saved when the person leaves the field, the text as they pause typing.
  // Saves run one after another, each reading the title the note has by then (a first save may still be naming it).
  const saved = useRef<string | null>(note?.title ?? null);
  const [title, setTitle] = useState(note?.title ?? "");
  const [text, setText] = useState(note?.text ?? "");
  const typed = useRef({ title, text });
  typed.current = { title, text };
  const chain = useRef<Promise<unknown>>(Promise.resolve());
  const serial = <R,>(fn: () => Promise<R>): Promise<R> => {
    const run = chain.current.then(fn);
    chain.current = run.catch(() => {});
    return run;
  };
  const taken = (t: string) => t !== saved.current && all.some((n) => n.title === t);
  const named = async (t: string, body: string) => {
    if (taken(t)) throw new Error(`a note titled “${t}” already exists: choose another title`);
    await call("notes/add", { title: t, text: body });
    const before = saved.current;
    saved.current = t;
    // A rename: the note is under its new title before the old one goes, so nothing is lost if this fails.
    if (before !== null) await call("notes/delete", { title: before });
    retitle(t);
  };
  const autosave = useAutosave("text", text, (body: string) =>
    serial(async () => {
      if (saved.current !== null) return call("notes/add", { title: saved.current, text: body });
      const t = typed.current.title.trim();
      if (!t) throw new Error("give the note a title to save it");
      return named(t, body);
    }),
  );
  // Someone else's change (another tab, the agent) shows here when nothing typed is waiting to be saved.
  useEffect(() => {
    if (!note || note.text === typed.current.text || autosave.dirty || autosave.status === "Saving…") return;
    autosave.accept(note.text);
    setText(note.text);
  }, [note?.updated]);
  const commitTitle = () =>
    serial(async () => {
      const t = typed.current.title.trim();
      if (!t || t === saved.current) return setTitle(saved.current ?? t);
      await named(t, typed.current.text);
    }).catch((e: Error) => toast(`Not ${saved.current === null ? "saved" : "renamed"}: ${e.message}`, { kind: "error" }));
  const remove = async () => {
    await autosave.flush();
    if (saved.current === null) return navigate({ new: null });
    const held = { title: saved.current, text: typed.current.text };
    if (!(await confirm({ title: `Delete “${held.title}”?`, message: "You can undo this for a few seconds after.", confirm: "Delete", danger: true }))) return;
    try {
      await call("notes/delete", { title: held.title });
    } catch (e) {
      return void toast(`Not deleted: ${(e as Error).message}`, { kind: "error" });
    }
    navigate({ open: null });
    undoable(`Deleted “${held.title}”`, async () => {
      await call("notes/add", held);
      navigate({ open: held.title });
      await reload();
    });
  };
  useKeys([{ key: "Mod+s", does: "Save now", run: () => void autosave.flush() }]);
  return html`<div class="note">
    <div class="row spread toolbar">
      <button type="button" class="quiet back" onClick=${() => navigate({ open: null, new: null })}>← All notes</button>
      <span class=${`save-status${autosave.failed ? " bad" : ""}`} role="status">${autosave.status}</span>
      <button type="button" class="quiet" onClick=${remove}>Delete</button>
    </div>
    <label for="note-title">Title</label>
    <input id="note-title" type="text" class="title-field" value=${title} autoFocus=${note === null}
      onInput=${(e: Event) => setTitle((e.target as HTMLInputElement).value)} onBlur=${commitTitle}
      onKeyDown=${(e: KeyboardEvent) => e.key === "Enter" && (e.target as HTMLInputElement).blur()} />
    <${MarkdownEditor} id="note-text" label="Text" value=${text} onInput=${setText} />
    ${note && html`<p class="hint">Written ${when(note.created)}; changed ${when(note.updated)}.</p>`}
  </div>`;
}
