// A confirm dialog on the browser's own <dialog>: modal, focus kept inside,
// Escape cancels. `await confirm({ ... })` is true only when confirmed.
import { render } from "preact";
import { useEffect, useRef } from "preact/hooks";
import { html } from "./html.ts";

export interface ConfirmOptions {
  title: string;
  message?: string;
  /** The confirming button's label ("Delete"). */
  confirm?: string;
  cancel?: string;
  /** Shown as a destructive act. */
  danger?: boolean;
}

function Confirm({ o, done }: { o: ConfirmOptions; done: (yes: boolean) => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current!;
    d.showModal();
    const cancel = () => done(false);
    d.addEventListener("cancel", cancel);
    return () => d.removeEventListener("cancel", cancel);
  }, []);
  return html`<dialog ref=${ref} class="confirm" aria-labelledby="confirm-title" aria-describedby=${o.message ? "confirm-text" : undefined}>
    <h2 id="confirm-title">${o.title}</h2>
    ${o.message && html`<p id="confirm-text">${o.message}</p>`}
    <div class="row end">
      <button type="button" class="quiet" onClick=${() => done(false)}>${o.cancel ?? "Cancel"}</button>
      <button type="button" class=${o.danger ? "danger" : ""} onClick=${() => done(true)}>${o.confirm ?? "OK"}</button>
    </div>
  </dialog>`;
}

export function confirm(o: ConfirmOptions): Promise<boolean> {
  const host = document.createElement("div");
  document.body.append(host);
  const before = document.activeElement as HTMLElement | null;
  return new Promise((resolve) => {
    const done = (yes: boolean) => {
      render(null, host);
      host.remove();
      before?.focus?.();
      resolve(yes);
    };
    render(html`<${Confirm} o=${o} done=${done} />`, host);
  });
}
