// Short notices at the foot of the page: "Deleted · Undo", "Not saved: …".
// One region, announced politely by screen readers; each goes by itself.
import { useEffect, useState } from "preact/hooks";
import { html } from "./html.ts";

export interface ToastOptions {
  /** Offered as a button beside the message; the toast goes when it is pressed. */
  undo?: () => void | Promise<void>;
  /** "error" stays until dismissed and is shown as an alert. */
  kind?: "info" | "error";
  /** How long it stays, in ms (default 6 s, 10 s with undo). */
  ms?: number;
}

interface Shown extends ToastOptions {
  id: number;
  message: string;
}

let shown: Shown[] = [];
let next = 1;
const watchers = new Set<(t: Shown[]) => void>();
const set = (t: Shown[]) => {
  shown = t;
  watchers.forEach((fn) => fn(shown));
};

/** Shows a notice; returns the function that takes it away. */
export function toast(message: string, o: ToastOptions = {}): () => void {
  const id = next++;
  set([...shown.slice(-3), { id, message, ...o }]);
  const gone = () => set(shown.filter((t) => t.id !== id));
  if (o.kind !== "error") setTimeout(gone, o.ms ?? (o.undo ? 10_000 : 6_000));
  return gone;
}

/**
 * Says what was just removed, with an Undo that runs `restore` (making it
 * again from the copy the view held, where the API has no restore); a
 * restore that fails says why instead.
 */
export function undoable(message: string, restore: () => Promise<unknown>): () => void {
  return toast(message, {
    undo: async () => {
      try {
        await restore();
      } catch (e) {
        toast(`Could not bring it back: ${(e as Error).message}`, { kind: "error" });
      }
    },
  });
}

/** The region toasts appear in; boot() renders it once per page. */
export function Toasts() {
  const [list, setList] = useState(shown);
  useEffect(() => {
    watchers.add(setList);
    return () => void watchers.delete(setList);
  }, []);
  const dismiss = (id: number) => set(shown.filter((t) => t.id !== id));
  return html`<div class="toasts" role="status" aria-live="polite">
    ${list.map(
      (t) => html`<div class="toast${t.kind === "error" ? " bad" : ""}" key=${t.id}>
        <span>${t.message}</span>
        ${t.undo &&
        html`<button type="button" class="quiet" onClick=${async () => {
          dismiss(t.id);
          await t.undo!();
        }}>Undo</button>`}
        <button type="button" class="quiet close" aria-label="Dismiss" onClick=${() => dismiss(t.id)}>×</button>
      </div>`,
    )}
  </div>`;
}
