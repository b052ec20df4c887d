// Writing Markdown: a plain textarea (the browser's own undo, spellcheck and
// input methods) with a preview rendered by the server, the same renderer and
// sanitizer a published page uses, so what the preview shows is what is safe.
import { useEffect, useRef, useState } from "preact/hooks";
import { post } from "./call.ts";
import { html } from "./html.ts";

/** Markdown as this instance publishes it: sanitized HTML. */
export function renderPreview(text: string): Promise<string> {
  return post<string>("/my/preview", { text });
}

export interface MarkdownEditorProps {
  id: string;
  label: string;
  value: string;
  onInput: (text: string) => void;
  rows?: number;
  placeholder?: string;
}

export function MarkdownEditor(p: MarkdownEditorProps) {
  const [tab, setTab] = useState<"write" | "preview">("write");
  const [preview, setPreview] = useState<{ html: string; error?: string } | null>(null);
  useEffect(() => {
    if (tab !== "preview") return;
    let gone = false;
    setPreview(null);
    renderPreview(p.value).then(
      (h) => !gone && setPreview({ html: h }),
      (e: Error) => !gone && setPreview({ html: "", error: e.message }),
    );
    return () => void (gone = true);
  }, [tab, p.value]);
  const tabButton = (t: "write" | "preview", label: string) =>
    html`<button type="button" role="tab" id=${`${p.id}-${t}-tab`} aria-selected=${tab === t} aria-controls=${`${p.id}-${t}`} class=${`tab${tab === t ? " on" : ""}`} onClick=${() => setTab(t)}>${label}</button>`;
  return html`<div class="md-editor">
    <div class="row spread"><label for=${p.id} class="md-label">${p.label}</label>
      <div role="tablist" aria-label=${`${p.label}: write or preview`} class="tabs">${tabButton("write", "Write")}${tabButton("preview", "Preview")}</div></div>
    <div id=${`${p.id}-write`} role="tabpanel" aria-labelledby=${`${p.id}-write-tab`} hidden=${tab !== "write"}>
      <textarea id=${p.id} rows=${p.rows ?? 16} value=${p.value} placeholder=${p.placeholder} spellcheck="true"
        onInput=${(e: Event) => p.onInput((e.target as HTMLTextAreaElement).value)}></textarea>
      <p class="hint">Markdown: # heading, **bold**, *italic*, - list, [link](https://…)</p>
    </div>
    <div id=${`${p.id}-preview`} role="tabpanel" aria-labelledby=${`${p.id}-preview-tab`} hidden=${tab !== "preview"} class="md-preview" tabindex="0">
      ${preview === null ? html`<p class="state">Rendering…</p>` : preview.error ? html`<p class="alert">${preview.error}</p>` : html`<div class="prose" dangerouslySetInnerHTML=${{ __html: preview.html || "<p><em>Nothing written yet.</em></p>" }}></div>`}
    </div>
  </div>`;
}

export interface Autosave<V = unknown> {
  /** What to tell the person: "", "Saving…", "Saved", or why it was not saved. */
  status: string;
  failed: boolean;
  /** Saves now, without waiting (leaving the editor, Ctrl+S). */
  flush: () => Promise<void>;
  /** Whether the value has changes not yet saved. */
  dirty: boolean;
  /** Takes a value as saved (one that came from the server: someone else's change shown here). */
  accept: (v: V) => void;
}

/**
 * Saves `value` with `save` once the person pauses typing (`delay` ms, default
 * 800). `key` names what is being edited: when it changes, the new value is
 * the saved baseline and nothing is saved for it until it is edited. A save
 * that fails is tried again on the next edit or flush, and says why.
 */
export function useAutosave<V>(key: string, value: V, save: (v: V) => Promise<unknown>, delay = 800): Autosave<V> {
  const [status, setStatus] = useState({ text: "", failed: false });
  const base = useRef<{ key: string; saved: string }>({ key, saved: JSON.stringify(value) });
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const latest = useRef({ value, save });
  // Switching to another record first saves what was pending for the one left, with its own save.
  if (base.current.key !== key) {
    const left = latest.current;
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
    if (JSON.stringify(left.value) !== base.current.saved)
      left.save(left.value).catch((e: Error) => setStatus({ text: `Not saved: ${e.message}`, failed: true }));
    base.current = { key, saved: JSON.stringify(value) };
  }
  latest.current = { value, save };
  const flush = async () => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
    const { value: v, save: s } = latest.current;
    const text = JSON.stringify(v);
    if (text === base.current.saved) return;
    setStatus({ text: "Saving…", failed: false });
    try {
      await s(v);
      base.current.saved = text;
      setStatus({ text: "Saved", failed: false });
    } catch (e) {
      setStatus({ text: `Not saved: ${(e as Error).message}`, failed: true });
    }
  };
  useEffect(() => {
    if (JSON.stringify(value) === base.current.saved) return;
    if (timer.current) clearTimeout(timer.current);
    timer.current = setTimeout(() => void flush(), delay);
  }, [key, JSON.stringify(value)]);
  // Leaving the page (or the view) saves what is pending.
  useEffect(() => {
    const leave = () => void flush();
    window.addEventListener("pagehide", leave);
    return () => {
      window.removeEventListener("pagehide", leave);
      void flush();
    };
  }, []);
  const accept = (v: V) => {
    base.current.saved = JSON.stringify(v);
  };
  return { status: status.text, failed: status.failed, flush, dirty: JSON.stringify(value) !== base.current.saved, accept };
}
