// The list of shortcuts `?` shows, in a dialog.
import { render } from "preact";
import { useEffect, useRef } from "preact/hooks";
import { html } from "./html.ts";
import type { Shortcut } from "./keys.ts";

const label = (k: string) => k.replace("Mod+", /Mac|iPhone|iPad/.test(navigator.platform) ? "⌘" : "Ctrl+").replace(/^ $/, "Space");

function Help({ list, done }: { list: Shortcut[]; done: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    ref.current!.showModal();
    ref.current!.addEventListener("close", done);
  }, []);
  return html`<dialog ref=${ref} class="confirm" aria-labelledby="keys-title">
    <h2 id="keys-title">Keyboard shortcuts</h2>
    <dl class="keys">${list.map((s) => html`<dt><kbd>${label(s.key)}</kbd></dt><dd>${s.does}</dd>`)}</dl>
    <div class="row end"><button type="button" onClick=${() => ref.current!.close()}>Close</button></div>
  </dialog>`;
}

export function confirmShortcuts(list: Shortcut[]): Promise<void> {
  if (document.querySelector("dialog[open]")) return Promise.resolve();
  const host = document.createElement("div");
  document.body.append(host);
  return new Promise((resolve) => {
    render(
      html`<${Help} list=${list} done=${() => {
        render(null, host);
        host.remove();
        resolve();
      }} />`,
      host,
    );
  });
}
