// Short notices at the foot of the page: "Deleted · Undo", "Not saved: …".
// One region, announced politely by screen readers. A notice goes by itself,
// but not while the pointer rests on it or focus is in it (someone reading or
// reaching for it keeps it), and one that offers Undo stays until it is used
// or dismissed: a person who is slow to read, or away for a moment, must not
// lose the only way back.
import { useEffect, useState } from "preact/hooks";
import { html } from "./html.ts";

export interface ToastOptions {
  /** Offered as a button beside the message; the toast goes when it is pressed. */
  undo?: () => void | Promise<void>;
  /** "error" stays until dismissed and is shown as an alert. */
  kind?: "info" | "error";
  /** How long it stays, in ms, counted while nobody holds it (default 6 s; with undo it stays until used or dismissed). */
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
  if (o.kind !== "error" && !o.undo) expire(id, o.ms ?? 6_000, gone);
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

/** Whether the pointer or focus is in the region: its notices' time stands still meanwhile. */
let held = false;

/** Takes the notice away once it has been shown, unheld, for `ms`. */
function expire(id: number, ms: number, gone: () => void) {
  let left = ms;
  let last = Date.now();
  const tick = () => {
    if (!shown.some((t) => t.id === id)) return;
    const now = Date.now();
    if (!held) left -= now - last;
    last = now;
    if (left <= 0) gone();
    else setTimeout(tick, Math.min(left, 250));
  };
  setTimeout(tick, Math.min(ms, 250));
}

/** The region toasts appear in; boot() renders it once per page. */
export function Toasts() {
  const [list, setList] = useState(shown);
  useEffect(() => {
    watchers.add(setList);
    return () => void watchers.delete(setList);
  }, []);
  const dismiss = (id: number) => set(shown.filter((t) => t.id !== id));
  const hold = (on: boolean) => () => void (held = on);
  return html`<div class="toasts" role="status" aria-live="polite" onPointerEnter=${hold(true)} onPointerLeave=${hold(false)} onFocusIn=${hold(true)} onFocusOut=${hold(false)}>
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
