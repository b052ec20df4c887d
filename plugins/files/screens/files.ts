// The person's files: a searchable list beside the open file, uploaded by the
// picker or by dropping files on the page with a progress bar, previewed
// (images, text and Markdown; a PDF in the browser's viewer), downloaded, its address copied, deleted.
// It calls files/list, files/put and files/delete, and opens each file at the
// URL the API gives for it. files/put takes the content as base64 in JSON, so
// the upload is one POST to /api/v1/files/put sent with XMLHttpRequest for its
// progress, with the session's CSRF token as `call` sends it.
import { call, confirm, csrfToken, Empty, Failure, html, Loading, navigate, renderPreview, SearchList, toast, useEffect, useKeys, useLayoutEffect, useParams, useQuery, useRef, useState } from "hearth/ui";

export interface StoredFile {
  id: string;
  name: string;
  type: string;
  size: number;
  url: string;
  share_url: string | null;
  created: string;
}

const when = (iso: string) => new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
const sized = (n: number) => (n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 ** 2).toFixed(1)} MB`);

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
.file-preview { margin: 1rem 0; }
.file-preview img { min-width: 6rem; image-rendering: pixelated; max-width: 100%; max-height: 70vh; border: 1px solid var(--line); border-radius: .4rem; }
.file-preview a.button { display: inline-flex; align-items: center; min-height: 2.75rem; padding: .6rem 1.1rem; border: 1px solid var(--accent); border-radius: .4rem; color: var(--accent); font-weight: 600; text-decoration: none; overflow-wrap: anywhere; }
.file-preview pre { white-space: pre-wrap; overflow-wrap: anywhere; border: 1px solid var(--line); border-radius: .4rem; padding: .75rem; max-height: 70vh; overflow: auto; }
.file-actions { gap: .5rem; }
.file-actions a.button { display: inline-flex; align-items: center; min-height: 2.75rem; padding: .6rem 1.1rem; border: 1px solid var(--accent); border-radius: .4rem; color: var(--accent); font-weight: 600; text-decoration: none; }
`;

interface Upload {
  key: number;
  name: string;
  sent: number;
  total: number;
  error?: string;
}

/** The file as base64, for files/put. */
function base64Of(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result).replace(/^data:[^,]*,/, ""));
    r.onerror = () => reject(new Error(`could not read ${file.name}`));
    r.readAsDataURL(file);
  });
}

/** POST /api/v1/files/put with its progress: the same route, token and answers as `call`. */
function put(file: File, onProgress: (sent: number, total: number) => void): Promise<StoredFile> {
  return base64Of(file).then(
    (content) =>
      new Promise((resolve, reject) => {
        const xhr = new XMLHttpRequest();
        xhr.open("POST", "/api/v1/files/put");
        xhr.setRequestHeader("content-type", "application/json");
        xhr.setRequestHeader("x-csrf-token", csrfToken());
        xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded, e.total);
        xhr.onload = () => {
          let body: { result?: StoredFile; error?: { message?: string } } = {};
          try {
            body = JSON.parse(xhr.responseText);
          } catch {}
          if (xhr.status === 200 && body.result) resolve(body.result);
          else if (xhr.status === 401) location.assign(`/signin?next=${encodeURIComponent(location.pathname + location.search)}`);
          else reject(new Error(body.error?.message ?? (xhr.status === 413 ? "the file is larger than this server accepts" : `the server answered ${xhr.status}`)));
        };
        xhr.onerror = () => reject(new Error("the server cannot be reached"));
        xhr.send(JSON.stringify({ name: file.name, content, encoding: "base64", ...(file.type && { type: file.type }) }));
      }),
  );
}

export default function Files() {
  const params = useParams();
  const open = params.get("open");
  const files = useQuery<StoredFile[]>("files/list", {}, { all: true });
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [dropping, setDropping] = useState(false);
  const seq = useRef(0);
  const picker = useRef<HTMLInputElement>(null);

  const send = async (list: FileList | File[]) => {
    for (const file of Array.from(list)) {
      const key = ++seq.current;
      const update = (u: Partial<Upload>) => setUploads((all) => all.map((x) => (x.key === key ? { ...x, ...u } : x)));
      setUploads((all) => [...all, { key, name: file.name, sent: 0, total: file.size }]);
      try {
        const stored = await put(file, (sent, total) => update({ sent, total }));
        setUploads((all) => all.filter((x) => x.key !== key));
        toast(`Uploaded “${stored.name}”`);
        await files.reload();
        navigate({ open: stored.id });
      } catch (e) {
        update({ error: (e as Error).message });
      }
    }
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
    { key: "Escape", does: "Back to the list (on a phone)", run: () => navigate({ open: null }) },
  ]);
  if (files.data === undefined)
    return files.error ? html`<${Failure} error=${files.error} retry=${files.reload} />` : html`<${Loading} label="Loading your files…" />`;
  const current = open === null ? null : (files.data.find((f) => f.id === open) ?? null);
  return html`<style>${STYLE}</style>
  <div class=${`split${open !== null ? " editing" : ""}${dropping ? " dropping" : ""}`}>
    <section class="pane list" aria-label="Your files">
      <div class="row files-tools">
        <span class="file-button"><span aria-hidden="true">Upload files</span>
          <input ref=${picker} type="file" multiple aria-label="Upload files" aria-keyshortcuts="u"
            onChange=${(e: Event) => {
              const input = e.target as HTMLInputElement;
              const chosen = Array.from(input.files ?? []);
              input.value = "";
              void send(chosen);
            }} /></span>
      </div>
      <p class="drop-hint">…or drop files anywhere on this page.</p>
      ${uploads.length > 0 &&
      html`<ul class="uploads" aria-label="Uploads">
        ${uploads.map(
          (u) => html`<li>
            <label for=${`upload-${u.key}`}>${u.name}${u.error ? html` — <span class="bad">not uploaded: ${u.error}</span>` : ` — ${sized(u.sent)} of ${sized(u.total)}`}</label>
            ${!u.error && html`<progress id=${`upload-${u.key}`} max=${u.total || 1} value=${u.sent}></progress>`}
            ${u.error && html`<button type="button" class="quiet" onClick=${() => setUploads((all) => all.filter((x) => x.key !== u.key))}>Dismiss</button>`}
          </li>`,
        )}
      </ul>`}
      <${SearchList}
        items=${files.data}
        label="Search files"
        searchId="file-search"
        keyOf=${(f: StoredFile) => f.id}
        title=${(f: StoredFile) => f.name}
        detail=${(f: StoredFile) => `${sized(f.size)} · ${when(f.created)}`}
        text=${(f: StoredFile) => `${f.name} ${f.type}`}
        selected=${open}
        onOpen=${(f: StoredFile) => navigate({ open: f.id })}
        empty=${html`<${Empty} title="No files yet"><p>Upload some with <strong>Upload files</strong> (or press <kbd>u</kbd>), or drop them here.</p></${Empty}>`}
      />
    </section>
    <section class="pane editor" aria-label="File">
      ${
        current
          ? html`<${Opened} key=${current.id} file=${current} />`
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

function Opened({ file }: { file: StoredFile }) {
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(file.url);
      toast("Address copied");
    } catch {
      toast(`Copy this address: ${file.url}`);
    }
  };
  const remove = async () => {
    if (!(await confirm({ title: `Delete “${file.name}”?`, message: "Its content goes for good.", confirm: "Delete", danger: true }))) return;
    try {
      await call("files/delete", { id: file.id });
    } catch (e) {
      return void toast(`Not deleted: ${(e as Error).message}`, { kind: "error" });
    }
    navigate({ open: null });
    toast(`Deleted “${file.name}”`);
  };
  return html`<div class="file">
    <div class="row spread toolbar">
      <button type="button" class="quiet back" onClick=${() => navigate({ open: null })}>← All files</button>
      <button type="button" class="quiet" onClick=${remove}>Delete</button>
    </div>
    <h2>${file.name}</h2>
    <p class="hint">${file.type} · ${sized(file.size)} · uploaded ${when(file.created)}</p>
    <div class="row file-actions">
      <a class="button" href=${file.url} download=${file.name}>Download</a>
      <a class="button" href=${file.url} target="_blank" rel="noopener">Open</a>
      <button type="button" class="quiet" onClick=${copy}>Copy address</button>
    </div>
    <${Preview} file=${file} />
  </div>`;
}
