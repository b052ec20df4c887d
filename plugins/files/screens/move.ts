// "Move…": a modal dialog to pick the folder a file or a folder goes to, by
// walking the drive's folders with the keyboard or the pointer (the way to
// move without dragging). Resolves to the folder chosen, or null.
import { html, render, useEffect, useRef, useState } from "hearth/ui";
import { baseName, foldersIn, within, type Folder, type FolderPath } from "./drive.ts";

interface Ask {
  /** What moves, for the title: "“plan.md”". */
  what: string;
  /** Where it is now: moving there again is not offered. */
  from: FolderPath;
  /** A folder being moved: it cannot go inside itself. */
  folder?: FolderPath;
}

function crumbsOf(path: FolderPath): { path: FolderPath; name: string }[] {
  const parts = path.split("/").filter(Boolean);
  return [{ path: "", name: "Files" }, ...parts.map((name, i) => ({ path: parts.slice(0, i + 1).join("/"), name }))];
}

function Chooser({ ask, done }: { ask: Ask; done: (to: FolderPath | null) => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [at, setAt] = useState<FolderPath>(ask.from);
  const [list, setList] = useState<Folder[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const d = ref.current!;
    d.showModal();
    const cancel = (e: Event) => {
      e.preventDefault();
      done(null);
    };
    d.addEventListener("cancel", cancel);
    return () => d.removeEventListener("cancel", cancel);
  }, []);
  useEffect(() => {
    let gone = false;
    setList(null);
    setError(null);
    foldersIn(at).then(
      (l) => !gone && setList(l),
      (e: Error) => !gone && setError(e.message),
    );
    return () => void (gone = true);
  }, [at]);
  const inside = (path: FolderPath) => ask.folder !== undefined && within(path, ask.folder);
  const here = at === ask.from || inside(at);
  return html`<dialog ref=${ref} class="confirm move-dialog" aria-labelledby="move-title">
    <h2 id="move-title">Move ${ask.what} to…</h2>
    <nav aria-label="Folder to move to"><ol class="crumbs">
      ${crumbsOf(at).map(
        (c) => html`<li key=${c.path}><button type="button" class="quiet" aria-current=${c.path === at ? "location" : undefined} onClick=${() => setAt(c.path)}>${c.name}</button></li>`,
      )}
    </ol></nav>
    ${error
      ? html`<p class="alert" role="alert">${error}</p>`
      : list === null
        ? html`<p class="state" role="status">Reading the folder…</p>`
        : list.filter((f) => !inside(f.path)).length === 0
          ? html`<p class="hint">No folders in ${at ? `“${baseName(at)}”` : "Files"}.</p>`
          : html`<ul class="move-folders" aria-label=${`Folders in ${at ? baseName(at) : "Files"}`}>
              ${list
                .filter((f) => !inside(f.path))
                .map((f) => html`<li key=${f.path}><button type="button" class="quiet" onClick=${() => setAt(f.path)}><span aria-hidden="true">▸ </span>${f.name}</button></li>`)}
            </ul>`}
    <div class="row end">
      <button type="button" class="quiet" onClick=${() => done(null)}>Cancel</button>
      <button type="button" disabled=${here} onClick=${() => done(at)}>Move to ${at ? `“${baseName(at)}”` : "Files"}</button>
    </div>
  </dialog>`;
}

/** Asks where to move something; the folder chosen, or null when the person cancels. */
export function chooseFolder(ask: Ask): Promise<FolderPath | null> {
  const host = document.createElement("div");
  document.body.append(host);
  const before = document.activeElement as HTMLElement | null;
  return new Promise((resolve) => {
    const done = (to: FolderPath | null) => {
      render(null, host);
      host.remove();
      before?.focus?.();
      resolve(to);
    };
    render(html`<${Chooser} ask=${ask} done=${done} />`, host);
  });
}
