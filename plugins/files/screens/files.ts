// The person's files, in the folders the WebDAV drive shows them in: the
// folder's folders and files beside the open file, with breadcrumbs back up;
// uploaded into the folder open by the picker or by dropping files on the
// page, with a progress bar; previewed (images, text and Markdown; a PDF in
// the browser's viewer), downloaded, its address copied, renamed, moved
// (dragged onto a folder, or with Move…), deleted with Undo. Folders are made,
// renamed, moved with all they hold (dragged onto a folder, or with Move…)
// and deleted with Undo.
// Files are read with files/list (every page of it) and deleted with
// files/delete; what the spec's methods do not do (a folder, a rename, a
// move, an upload into a folder) goes to the drive, one transaction each
// (drive.ts). Moving keeps a file's id, so its address and share link stay.
import { call, callAll, confirm, Empty, Failure, formatDate, html, live, Loading, onceLive, navigate, renderPreview, toast, undoable, useCallback, useEffect, useKeys, useLayoutEffect, useParams, useQuery, useRef, useState } from "hearth/ui";
import { baseName, foldersIn, foldersUnder, joinPath, makeFolder, move, parentOf, putFile, removeFolder, restoreFolder, within, type Folder, type FolderCopy, type FolderPath } from "./drive.ts";
import { chooseFolder } from "./move.ts";

export interface StoredFile {
  id: string;
  name: string;
  folder: string;
  type: string;
  size: number;
  url: string;
  share_url: string | null;
  created: string;
}

const when = (iso: string) => formatDate(iso, { dateStyle: "medium", timeStyle: "short" });
const sized = (n: number) => (n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 ** 2).toFixed(1)} MB`);
const folderName = (path: FolderPath) => (path ? `“${baseName(path)}”` : "Files");
const pathOf = (f: StoredFile) => joinPath(f.folder, f.name);

const STYLE = `
.files-tools { gap: .5rem; align-items: center; }
.files-tools .file-button { position: relative; display: inline-flex; align-items: center; min-height: 2.75rem; padding: .6rem 1.1rem; border: 1px solid var(--accent); border-radius: .4rem; background: var(--accent); color: var(--bg); font-weight: 600; }
.files-tools input[type=file] { position: absolute; inset: 0; opacity: 0; width: 100%; cursor: pointer; }
.files-tools .file-button:focus-within { outline: 3px solid var(--accent); outline-offset: 2px; }
.drop-hint { border: 2px dashed var(--line); border-radius: .5rem; padding: .75rem; color: var(--muted); margin: .5rem 0; text-align: center; }
.dropping .drop-hint { border-color: var(--accent); color: var(--fg); }
.uploads { list-style: none; padding: 0; margin: .5rem 0; }
.uploads li { margin: .35rem 0; overflow-wrap: anywhere; }
.uploads progress { width: 100%; height: .75rem; accent-color: var(--accent); }
.crumbs { display: flex; flex-wrap: wrap; align-items: center; list-style: none; margin: .5rem 0; padding: 0; gap: .1rem; }
.crumbs li { display: flex; align-items: center; }
.crumbs li + li::before { content: "/"; color: var(--muted); padding: 0 .2rem; }
.crumbs button { min-height: 2.75rem; padding: .3rem .5rem; border-color: transparent; overflow-wrap: anywhere; text-align: left; }
.crumbs button[aria-current] { font-weight: 700; color: var(--fg); }
.folder-tools { gap: .4rem; margin: 0 0 .5rem; }
.folder-tools button { padding: .5rem .8rem; }
.move-dialog button:disabled { opacity: .5; cursor: not-allowed; }
.search-list .item.folder { flex-direction: row; align-items: center; gap: .6rem; min-height: 2.75rem; }
.folder-icon { flex: none; width: 1.25rem; height: 1rem; border-radius: .15rem .3rem .2rem .2rem; background: color-mix(in srgb, var(--accent) 55%, var(--bg)); box-shadow: inset 0 .25rem 0 color-mix(in srgb, var(--accent) 80%, var(--bg)); }
.drop-on, .search-list .item.drop-on { outline: 3px dashed var(--accent); outline-offset: -3px; background: color-mix(in srgb, var(--accent) 14%, transparent); }
.name-form { margin: .5rem 0; }
.name-form label { display: block; font-weight: 600; margin-bottom: .25rem; }
.name-form input { font: inherit; padding: .6rem .7rem; border: 1px solid var(--muted); border-radius: .4rem; background: var(--field); color: var(--fg); min-height: 2.75rem; flex: 1 1 12rem; min-width: 0; }
.name-form .bad { color: var(--bad); margin: .35rem 0 0; }
.file-preview { margin: 1rem 0; }
.file-preview img { min-width: 6rem; image-rendering: pixelated; max-width: 100%; max-height: 70vh; border: 1px solid var(--line); border-radius: .4rem; }
.file-preview a.button { display: inline-flex; align-items: center; min-height: 2.75rem; padding: .6rem 1.1rem; border: 1px solid var(--accent); border-radius: .4rem; color: var(--accent); font-weight: 600; text-decoration: none; overflow-wrap: anywhere; }
.file-preview pre { white-space: pre-wrap; overflow-wrap: anywhere; border: 1px solid var(--line); border-radius: .4rem; padding: .75rem; max-height: 70vh; overflow: auto; }
.file-actions { gap: .5rem; }
.file-actions a.button { display: inline-flex; align-items: center; min-height: 2.75rem; padding: .6rem 1.1rem; border: 1px solid var(--accent); border-radius: .4rem; color: var(--accent); font-weight: 600; text-decoration: none; }
.move-dialog nav { margin: 0 0 .25rem; }
.move-folders { list-style: none; margin: 0 0 .75rem; padding: 0; max-height: 50vh; overflow-y: auto; }
.move-folders button { width: 100%; text-align: left; border-color: transparent; border-bottom: 1px solid var(--line); border-radius: 0; }
`;

/** The drag of a file of this screen (not a file from the computer, which uploads). */
const DRAGGED = "application/x-hearth-file";
/** The drag of a folder of this screen: its path. */
const DRAGGED_FOLDER = "application/x-hearth-folder";
/**
 * The most a deleted folder's files may weigh for its Undo: the copy Undo
 * writes back is read before the folder goes and held in the page until the
 * notice goes. A heavier folder is asked about first instead.
 */
const UNDO_BYTES = 64 * 1024 * 1024;
const counted = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

interface Upload {
  key: number;
  name: string;
  sent: number;
  total: number;
  error?: string;
}

/** The folders in `folder`, read from the drive and read again when the person's files change anywhere. */
function useFolders(folder: FolderPath) {
  const [state, setState] = useState<{ folder: FolderPath; list?: Folder[]; error?: unknown }>({ folder });
  const seq = useRef(0);
  // The first read is sent as the screen is first drawn, not once it is painted (useQuery does the same).
  const early = useRef<{ folder: FolderPath; answer: Promise<Folder[]> } | null | undefined>(undefined);
  if (early.current === undefined) {
    early.current = { folder, answer: foldersIn(folder) };
    early.current.answer.catch(() => {}); // told by reload, which takes it up
  }
  const reload = useCallback(async () => {
    const mine = ++seq.current;
    const sent = early.current?.folder === folder ? early.current.answer : null;
    early.current = null;
    try {
      const list = await (sent ?? foldersIn(folder));
      if (mine === seq.current) setState({ folder, list });
    } catch (error) {
      if (mine === seq.current) setState((s) => ({ folder, list: s.folder === folder ? s.list : undefined, error }));
    }
  }, [folder]);
  useEffect(() => {
    void reload();
    const stop = live(() => void reload(), ["files"]);
    // Read before the live stream opened (it opens once the screen is drawn), a change told before then is read when
    // it does; with the stream open already, the read above missed nothing.
    let now = true;
    const cancel = onceLive(() => void (now || reload()));
    now = false;
    return () => {
      cancel();
      stop();
    };
  }, [reload]);
  const mine = state.folder === folder;
  return { list: mine ? state.list : undefined, error: mine ? state.error : undefined, reload };
}

/**
 * Of files of one name in one folder (files/put may store several), the one
 * the drive shows and moves: the newest, the later id of two at once.
 */
function newestOf(files: StoredFile[]): Map<string, StoredFile> {
  const out = new Map<string, StoredFile>();
  for (const f of files) {
    const seen = out.get(pathOf(f));
    if (!seen || f.created > seen.created || (f.created === seen.created && f.id > seen.id)) out.set(pathOf(f), f);
  }
  return out;
}

/** A file's bytes, for the copy Undo writes back. */
async function bytesOf(file: StoredFile): Promise<Blob> {
  const res = await fetch(file.url, { credentials: "same-origin" });
  if (!res.ok) throw new Error(`“${file.name}” could not be read: the server answered ${res.status}`);
  return res.blob();
}

/** A form asking for a name: a new folder's, or a new name for a file or a folder. */
function NameForm({ id, label, value = "", save, cancel, submit }: { id: string; label: string; value?: string; save: (name: string) => Promise<string | null>; cancel: () => void; submit: string }) {
  const [name, setName] = useState(value);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);
  const go = async (e: Event) => {
    e.preventDefault();
    const wanted = name.trim();
    if (!wanted) return setError("Type a name.");
    if (wanted.includes("/")) return setError("A name cannot hold a slash (/).");
    setBusy(true);
    const why = await save(wanted);
    setBusy(false);
    setError(why);
  };
  return html`<form class="name-form" onSubmit=${go} onKeyDown=${(e: KeyboardEvent) => e.key === "Escape" && (e.stopPropagation(), cancel())}>
    <label for=${id}>${label}</label>
    <div class="row">
      <input id=${id} ref=${input} value=${name} autocomplete="off" aria-invalid=${error ? "true" : undefined} aria-describedby=${error ? `${id}-error` : undefined}
        onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} />
      <button type="submit" disabled=${busy}>${submit}</button>
      <button type="button" class="quiet" onClick=${cancel}>Cancel</button>
    </div>
    ${error && html`<p id=${`${id}-error`} class="bad" role="alert">${error}</p>`}
  </form>`;
}

/** A move's outcome: null when done (or nothing to do), false when the person chose not to replace what has the name, else why it was refused. */
type Moved = string | null | false;
/** What a rename form says when the person kept the other of the name. */
const renamed = (why: Moved, name: string) => (why === false ? `“${name}” is taken there: choose another name.` : why);

/** Whether the person agrees to replace what is at the destination (the drive refused: 412). */
const replaceAsked = (name: string, folder: FolderPath, isFolder: boolean) =>
  confirm({
    title: `Replace “${name}”?`,
    message: `${folderName(folder)} already has ${isFolder ? "a folder" : "a file"} named “${name}”. Replacing it deletes ${isFolder ? "that folder and everything in it" : "that file"}.`,
    confirm: "Replace",
    danger: true,
  });

export default function Files() {
  const params = useParams();
  const open = params.get("open");
  const folder: FolderPath = (params.get("folder") ?? "").split("/").filter(Boolean).join("/");
  const files = useQuery<StoredFile[]>("files/list", {}, { all: true });
  const subfolders = useFolders(folder);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [dropping, setDropping] = useState(false);
  const [naming, setNaming] = useState<"new" | "rename" | null>(null);
  const [q, setQ] = useState("");
  const [target, setTarget] = useState<string | null>(null);
  const seq = useRef(0);
  const picker = useRef<HTMLInputElement>(null);
  /** The folder being dragged, if one is: a drop is offered only where it may go (a drag's data cannot be read until it lands). */
  const dragging = useRef<FolderPath | null>(null);
  const here = useRef(folder);
  here.current = folder;
  useEffect(() => setNaming(null), [folder]);

  // The lists as the page now shows them: an Undo runs after the page has moved on (a deleted folder's Undo, from
  // its parent), and reading the lists it closed over would read the folder it left, its answer coming last.
  const shown = useRef({ files, subfolders });
  shown.current = { files, subfolders };
  const refresh = async () => {
    await Promise.all([shown.current.files.reload(), shown.current.subfolders.reload()]);
  };

  const send = async (list: FileList | File[]) => {
    const into = here.current;
    for (const file of Array.from(list)) {
      const key = ++seq.current;
      const update = (u: Partial<Upload>) => setUploads((all) => all.map((x) => (x.key === key ? { ...x, ...u } : x)));
      setUploads((all) => [...all, { key, name: file.name, sent: 0, total: file.size }]);
      const progress = (sent: number, total: number) => update({ sent, total });
      try {
        try {
          await putFile(joinPath(into, file.name), file, { progress });
        } catch (e) {
          if ((e as { status?: number }).status !== 412) throw e;
          if (!(await replaceAsked(file.name, into, false))) {
            setUploads((all) => all.filter((x) => x.key !== key));
            continue;
          }
          await putFile(joinPath(into, file.name), file, { progress, replace: true });
        }
        setUploads((all) => all.filter((x) => x.key !== key));
        toast(`Uploaded “${file.name}”`);
        await files.reload();
        // The file the drive shows at that name is the one just stored.
        const stored = await call<{ items: StoredFile[] }>("files/list", { limit: 50 }).then((p) => p.items.find((f) => f.folder === into && f.name === file.name));
        if (stored) navigate({ open: stored.id });
      } catch (e) {
        update({ error: (e as Error).message });
      }
    }
  };

  /** Moves (or renames) a file; asks before replacing one of the same name; Undo moves it back. Null when done, false when the person kept the other, else why not. */
  const moveFile = async (file: StoredFile, toFolder: FolderPath, name = file.name): Promise<Moved> => {
    const from = pathOf(file);
    const to = joinPath(toFolder, name);
    if (from === to) return null;
    let replaced = false;
    try {
      try {
        await move(from, to, { folder: false });
      } catch (e) {
        if ((e as { status?: number }).status !== 412) throw e;
        if (!(await replaceAsked(name, toFolder, false))) return false;
        await move(from, to, { folder: false, replace: true });
        replaced = true;
      }
    } catch (e) {
      return (e as Error).message;
    }
    await refresh();
    const said = toFolder === file.folder ? `Renamed “${file.name}” to “${name}”` : `Moved “${name}” to ${folderName(toFolder)}`;
    // What a move replaced is gone: moving back would not bring it again, so no Undo then.
    if (replaced) toast(said);
    else
      undoable(said, async () => {
        await move(to, from, { folder: false });
        await refresh();
      });
    return null;
  };

  /** Moves (or renames) a folder with everything in it; where it is the open one (or holds it), the screen follows it. */
  const moveFolder = async (from: FolderPath, to: FolderPath): Promise<Moved> => {
    if (from === to) return null;
    let replaced = false;
    try {
      try {
        await move(from, to, { folder: true });
      } catch (e) {
        if ((e as { status?: number }).status !== 412) throw e;
        if (!(await replaceAsked(baseName(to), parentOf(to), true))) return false;
        await move(from, to, { folder: true, replace: true });
        replaced = true;
      }
    } catch (e) {
      return (e as Error).message;
    }
    if (within(here.current, from)) navigate({ folder: to + here.current.slice(from.length) || null });
    await refresh();
    const said = parentOf(from) === parentOf(to) ? `Renamed “${baseName(from)}” to “${baseName(to)}”` : `Moved “${baseName(to)}” to ${folderName(parentOf(to))}`;
    if (replaced) toast(said);
    else
      undoable(said, async () => {
        await move(to, from, { folder: true });
        if (within(here.current, to)) navigate({ folder: from + here.current.slice(to.length) || null });
        await refresh();
      });
    return null;
  };

  const moveWith = async (file: StoredFile) => {
    const to = await chooseFolder({ what: `“${file.name}”`, from: file.folder });
    if (to === null) return;
    const why = await moveFile(file, to);
    if (why) toast(why, { kind: "error" });
  };

  /**
   * Deletes the open folder with everything in it; Undo makes it again from a
   * copy taken first (its folders, and each file's bytes), through the drive.
   * Where that copy cannot be whole (files heavier than UNDO_BYTES, or several
   * files of one name, of which the drive keeps one) the person is asked first
   * instead, since then it goes for good.
   */
  const deleteFolder = async () => {
    const gone = folder;
    let copy: FolderCopy | null = null;
    let inside: StoredFile[];
    try {
      inside = (await callAll<StoredFile>("files/list")).filter((f) => within(f.folder, gone));
      const whole = newestOf(inside).size === inside.length && inside.reduce((n, f) => n + f.size, 0) <= UNDO_BYTES;
      if (whole) copy = { path: gone, folders: await foldersUnder(gone), files: await Promise.all(inside.map(async (f) => ({ path: pathOf(f), body: await bytesOf(f) }))) };
    } catch (e) {
      return void toast(`Not deleted: ${(e as Error).message}`, { kind: "error" });
    }
    if (
      !copy &&
      !(await confirm({
        title: `Delete “${baseName(gone)}”?`,
        message: `It holds ${counted(inside.length, "file")}; they go with it, for good.`,
        confirm: "Delete",
        danger: true,
      }))
    )
      return;
    try {
      await removeFolder(gone);
    } catch (e) {
      return void toast((e as Error).message, { kind: "error" });
    }
    navigate({ folder: parentOf(gone) || null, open: null });
    await refresh();
    const said = `Deleted “${baseName(gone)}”${inside.length ? ` and the ${counted(inside.length, "file")} in it` : ""}`;
    const kept = copy;
    if (!kept) return void toast(said);
    undoable(said, async () => {
      await restoreFolder(kept);
      await refresh();
    });
  };

  // Files dropped anywhere on the page are uploaded: listened for as the page is drawn (a layout effect), so a
  // drop onto the hint it shows is never one the page was not yet listening for.
  useLayoutEffect(() => {
    const over = (e: DragEvent) => {
      if (!e.dataTransfer?.types.includes("Files")) return;
      e.preventDefault();
      setDropping(true);
    };
    const leave = (e: DragEvent) => e.relatedTarget === null && setDropping(false);
    const drop = (e: DragEvent) => {
      if (!e.dataTransfer?.files.length) return;
      e.preventDefault();
      setDropping(false);
      void send(e.dataTransfer.files);
    };
    document.addEventListener("dragover", over);
    document.addEventListener("dragleave", leave);
    document.addEventListener("drop", drop);
    return () => {
      document.removeEventListener("dragover", over);
      document.removeEventListener("dragleave", leave);
      document.removeEventListener("drop", drop);
    };
  }, []);
  useKeys([
    { key: "u", does: "Upload files", run: () => picker.current?.click() },
    { key: "n", does: "New folder", run: () => setNaming("new") },
    { key: "Escape", does: "Back to the list (on a phone)", run: () => navigate({ open: null }) },
  ]);
  if (files.data === undefined)
    return files.error ? html`<${Failure} error=${files.error} retry=${files.reload} />` : html`<${Loading} label="Loading your files…" />`;

  const all = files.data;
  const newest = newestOf(all);
  const current = open === null ? null : (all.find((f) => f.id === open) ?? null);
  const words = q.toLowerCase().split(/\s+/).filter(Boolean);
  const found = words.length ? all.filter((f) => words.every((w) => `${f.name} ${f.folder} ${f.type}`.toLowerCase().includes(w))) : null;
  const shownFiles = found ?? all.filter((f) => f.folder === folder);
  const shownFolders = found ? [] : (subfolders.list ?? []);
  const gone = subfolders.error && (subfolders.error as { status?: number }).status === 404;

  // A file or a folder dragged from the list onto a folder (a row or a breadcrumb) moves there; a folder never
  // into itself, nor where it already is (the drop is not offered there).
  const fits = (e: DragEvent, path: FolderPath) => {
    const types = e.dataTransfer?.types ?? [];
    if (types.includes(DRAGGED)) return true;
    const from = dragging.current;
    return types.includes(DRAGGED_FOLDER) && from !== null && !within(path, from) && parentOf(from) !== path;
  };
  const dropTarget = (path: FolderPath) => ({
    onDragOver: (e: DragEvent) => {
      if (!fits(e, path)) return;
      e.preventDefault();
      if (e.dataTransfer) e.dataTransfer.dropEffect = "move";
      if (target !== path) setTarget(path);
    },
    onDragLeave: () => setTarget((t) => (t === path ? null : t)),
    onDrop: (e: DragEvent) => {
      const from = e.dataTransfer?.getData(DRAGGED_FOLDER);
      if (from && fits(e, path)) {
        e.preventDefault();
        e.stopPropagation();
        setTarget(null);
        dragging.current = null;
        return void moveFolder(from, joinPath(path, baseName(from))).then((why) => why && toast(why, { kind: "error" }));
      }
      const id = e.dataTransfer?.getData(DRAGGED);
      if (!id) return;
      e.preventDefault();
      e.stopPropagation();
      setTarget(null);
      const file = all.find((f) => f.id === id);
      if (!file) return;
      // The drive moves the newest file of a name: an older one of the same name stays where it is.
      if (newest.get(pathOf(file))?.id !== file.id) return void toast(`Not moved: a newer “${file.name}” is beside it, and the drive moves that one. Delete one of them first.`, { kind: "error" });
      void moveFile(file, path).then((why) => why && toast(why, { kind: "error" }));
    },
  });
  const crumbs = [{ path: "", name: "Files" }, ...folder.split("/").filter(Boolean).map((name, i, parts) => ({ path: parts.slice(0, i + 1).join("/"), name }))];
  const walk = (e: KeyboardEvent) => {
    if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
    const items = [...document.querySelectorAll<HTMLButtonElement>(".files-list button.item")];
    const at = items.indexOf(document.activeElement as HTMLButtonElement);
    e.preventDefault();
    const to = e.key === "ArrowDown" ? Math.min(at + 1, items.length - 1) : at - 1;
    if (to < 0) document.getElementById("file-search")?.focus();
    else items[to]?.focus();
  };

  return html`<style>${STYLE}</style>
  <div class=${`split${open !== null ? " editing" : ""}${dropping ? " dropping" : ""}`}>
    <section class="pane list" aria-label="Your files">
      <div class="row files-tools">
        <span class="file-button"><span aria-hidden="true">Upload files</span>
          <input ref=${picker} type="file" multiple aria-label=${`Upload files to ${folder ? baseName(folder) : "Files"}`} aria-keyshortcuts="u"
            onChange=${(e: Event) => {
              const input = e.target as HTMLInputElement;
              const chosen = Array.from(input.files ?? []);
              input.value = "";
              void send(chosen);
            }} /></span>
        <button type="button" class="quiet" aria-keyshortcuts="n" onClick=${() => setNaming("new")}>New folder</button>
      </div>
      <nav aria-label="Folder"><ol class="crumbs">
        ${crumbs.map(
          (c) => html`<li key=${c.path}><button type="button" class=${`quiet${target === c.path ? " drop-on" : ""}`} aria-current=${c.path === folder ? "location" : undefined}
            onClick=${() => navigate({ folder: c.path || null })} ...${dropTarget(c.path)}>${c.name}</button></li>`,
        )}
      </ol></nav>
      ${folder &&
      !gone &&
      naming !== "rename" &&
      html`<div class="row folder-tools">
        <button type="button" class="quiet" onClick=${() => setNaming("rename")}>Rename<span class="visually-hidden"> folder</span></button>
        <button type="button" class="quiet" onClick=${async () => {
          const to = await chooseFolder({ what: `“${baseName(folder)}”`, from: parentOf(folder), folder });
          if (to === null) return;
          const why = await moveFolder(folder, joinPath(to, baseName(folder)));
          if (why) toast(why, { kind: "error" });
        }}>Move<span class="visually-hidden"> folder</span>…</button>
        <button type="button" class="quiet" onClick=${deleteFolder}>Delete<span class="visually-hidden"> folder</span></button>
      </div>`}
      ${naming === "rename" &&
      html`<${NameForm} id="folder-name" label=${`New name for “${baseName(folder)}”`} value=${baseName(folder)} submit="Rename" cancel=${() => setNaming(null)}
        save=${async (name: string) => {
          const why = await moveFolder(folder, joinPath(parentOf(folder), name));
          if (why === null) setNaming(null);
          return renamed(why, name);
        }} />`}
      ${naming === "new" &&
      html`<${NameForm} id="new-folder" label=${`New folder in ${folder ? `“${baseName(folder)}”` : "Files"}`} submit="Make folder" cancel=${() => setNaming(null)}
        save=${async (name: string) => {
          try {
            await makeFolder(joinPath(folder, name));
          } catch (e) {
            return (e as { status?: number }).status === 405 ? `${folderName(folder)} already has something named “${name}”.` : (e as Error).message;
          }
          setNaming(null);
          await subfolders.reload();
          toast(`Made the folder “${name}”`);
          return null;
        }} />`}
      <p class="drop-hint">…or drop files anywhere on this page${folder ? html`: they go into “${baseName(folder)}”` : ""}.</p>
      ${uploads.length > 0 &&
      html`<ul class="uploads" aria-label="Uploads">
        ${uploads.map(
          (u) => html`<li key=${u.key}>
            <label for=${`upload-${u.key}`}>${u.name}${u.error ? html` — <span class="bad">not uploaded: ${u.error}</span>` : ` — ${sized(u.sent)} of ${sized(u.total)}`}</label>
            ${!u.error && html`<progress id=${`upload-${u.key}`} max=${u.total || 1} value=${u.sent}></progress>`}
            ${u.error && html`<button type="button" class="quiet" onClick=${() => setUploads((all) => all.filter((x) => x.key !== u.key))}>Dismiss</button>`}
          </li>`,
        )}
      </ul>`}
      <div class="search-list files-list" onKeyDown=${walk}>
        <label class="visually-hidden" for="file-search">Search files</label>
        <input id="file-search" type="search" placeholder="Search all files" value=${q} autocomplete="off"
          onInput=${(e: Event) => setQ((e.target as HTMLInputElement).value)}
          onKeyDown=${(e: KeyboardEvent) => e.key === "Enter" && shownFiles[0] && navigate({ open: shownFiles[0].id })} />
        ${gone
          ? html`<${Empty} title="This folder is not here any more"><p>It was moved or deleted.</p><button type="button" class="quiet" onClick=${() => navigate({ folder: null })}>Back to all files</button></${Empty}>`
          : shownFolders.length + shownFiles.length === 0
            ? found
              ? html`<p class="state">Nothing matches “${q}”.</p>`
              : folder
                ? html`<${Empty} title="This folder is empty"><p>Upload files here, or drag files onto it from another folder.</p></${Empty}>`
                : html`<${Empty} title="No files yet"><p>Upload some with <strong>Upload files</strong> (or press <kbd>u</kbd>), or drop them here.</p></${Empty}>`
            : html`<ul class="items" aria-label=${found ? "Files found" : `In ${folder ? baseName(folder) : "Files"}`}>
              ${shownFolders.map(
                (f) => html`<li key=${`folder:${f.path}`}><button type="button" class=${`item folder${target === f.path ? " drop-on" : ""}`} draggable="true"
                  onDragStart=${(e: DragEvent) => {
                    dragging.current = f.path;
                    e.dataTransfer?.setData(DRAGGED_FOLDER, f.path);
                    if (e.dataTransfer) e.dataTransfer.effectAllowed = "move";
                  }}
                  onDragEnd=${() => (dragging.current = null)}
                  onClick=${() => navigate({ folder: f.path, open: null })} ...${dropTarget(f.path)}>
                  <span class="folder-icon" aria-hidden="true"></span><span class="item-title">${f.name}</span><span class="visually-hidden">, folder</span>
                </button></li>`,
              )}
              ${shownFiles.map(
                (f) => html`<li key=${f.id}><button type="button" class=${`item${f.id === open ? " on" : ""}`} aria-current=${f.id === open ? "true" : undefined} draggable="true"
                  onDragStart=${(e: DragEvent) => {
                    e.dataTransfer?.setData(DRAGGED, f.id);
                    if (e.dataTransfer) e.dataTransfer.effectAllowed = "move";
                  }}
                  onClick=${() => navigate({ open: f.id })}>
                  <span class="item-title">${f.name}</span>
                  <span class="item-detail">${found && f.folder ? `in ${f.folder} · ` : ""}${sized(f.size)} · ${when(f.created)}</span>
                </button></li>`,
              )}
            </ul>`}
      </div>
    </section>
    <section class="pane editor" aria-label="File">
      ${
        current
          ? html`<${Opened} key=${current.id} file=${current} shown=${newest.get(pathOf(current))?.id === current.id} moveFile=${moveFile} moveWith=${moveWith} refresh=${refresh} />`
          : open !== null
            ? html`<${Empty} title="This file is gone"><p>It was deleted.</p></${Empty}>`
            : html`<${Empty} title="No file open"><p>Pick a file from the list to preview it.</p></${Empty}>`
      }
    </section>
  </div>`;
}

function Preview({ file }: { file: StoredFile }) {
  const [text, setText] = useState<string | null>(null);
  const [markup, setMarkup] = useState<string | null>(null);
  const markdown = /\.(md|markdown)$/i.test(file.name) || file.type === "text/markdown";
  const textual = markdown || /^text\/|json|xml|javascript|yaml|csv/.test(file.type);
  useEffect(() => {
    if (!textual || file.size > 1024 * 1024) return;
    void fetch(file.url, { credentials: "same-origin" })
      .then((r) => r.text())
      .then(async (t) => {
        setText(t);
        if (markdown) setMarkup(await renderPreview(t));
      })
      .catch(() => setText(null));
  }, [file.id]);
  if (file.type.startsWith("image/")) return html`<div class="file-preview"><img src=${file.url} alt=${`Preview of ${file.name}`} /></div>`;
  // The screen's policy frames nothing, so a PDF opens in the browser's own viewer, in a tab of its own.
  if (file.type === "application/pdf")
    return html`<p class="file-preview"><a class="button pdf-open" href=${file.url} target="_blank" rel="noopener">Read “${file.name}” in the browser’s PDF viewer</a></p>`;
  if (textual && markup !== null) return html`<div class="file-preview prose" dangerouslySetInnerHTML=${{ __html: markup }}></div>`;
  if (textual && text !== null) return html`<div class="file-preview"><pre tabindex="0" aria-label=${`Text of ${file.name}`}>${text}</pre></div>`;
  if (textual && file.size <= 1024 * 1024) return html`<${Loading} label="Loading the preview…" />`;
  return html`<p class="hint">No preview for this kind of file (${file.type}): download it to open it.</p>`;
}

function Opened({ file, shown, moveFile, moveWith, refresh }: { file: StoredFile; shown: boolean; moveFile: (f: StoredFile, to: FolderPath, name?: string) => Promise<Moved>; moveWith: (f: StoredFile) => Promise<void>; refresh: () => Promise<void> }) {
  const [renaming, setRenaming] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(file.url);
      toast("Address copied");
    } catch {
      toast(`Copy this address: ${file.url}`);
    }
  };
  const remove = async () => {
    // The copy Undo writes back, taken before the file goes; it comes back in its folder under its name, with a new address.
    let copy: Blob;
    try {
      const res = await fetch(file.url, { credentials: "same-origin" });
      if (!res.ok) throw new Error(`the server answered ${res.status}`);
      copy = await res.blob();
      await call("files/delete", { id: file.id });
    } catch (e) {
      return void toast(`Not deleted: ${(e as Error).message}`, { kind: "error" });
    }
    navigate({ open: null });
    await refresh();
    undoable(`Deleted “${file.name}”`, async () => {
      await putFile(pathOf(file), copy);
      await refresh();
    });
  };
  return html`<div class="file">
    <div class="row spread toolbar">
      <button type="button" class="quiet back" onClick=${() => navigate({ open: null })}>← All files</button>
      <div class="row">
        <button type="button" class="quiet" disabled=${!shown} onClick=${() => setRenaming(true)}>Rename</button>
        <button type="button" class="quiet" disabled=${!shown} onClick=${() => moveWith(file)}>Move…</button>
        <button type="button" class="quiet" onClick=${remove}>Delete</button>
      </div>
    </div>
    ${renaming
      ? html`<${NameForm} id="file-name" label=${`New name for “${file.name}”`} value=${file.name} submit="Rename" cancel=${() => setRenaming(false)}
          save=${async (name: string) => {
            const why = await moveFile(file, file.folder, name);
            if (why === null) setRenaming(false);
            return renamed(why, name);
          }} />`
      : html`<h2>${file.name}</h2>`}
    <p class="hint">${file.type.split(";")[0]} · ${sized(file.size)} · uploaded ${when(file.created)}${file.folder ? html` · in <a href=${`?folder=${encodeURIComponent(file.folder)}`} onClick=${(e: Event) => (e.preventDefault(), navigate({ folder: file.folder }))}>${file.folder}</a>` : ""}</p>
    ${!shown && html`<p class="hint">A newer file of the same name is in this folder: the drive shows that one, so this one cannot be renamed or moved. Delete one of them first.</p>`}
    <div class="row file-actions">
      <a class="button" href=${file.url} download=${file.name}>Download</a>
      <a class="button" href=${file.url} target="_blank" rel="noopener">Open</a>
      <button type="button" class="quiet" onClick=${copy}>Copy address</button>
    </div>
    <${Preview} file=${file} />
  </div>`;
}
