// What a view shows while it waits, when it has nothing, and when a call failed.
import type { ComponentChildren } from "preact";
import { html } from "./html.ts";

export function Loading({ label = "Loading…" }: { label?: string }) {
  return html`<p class="state loading" role="status"><span class="spinner" aria-hidden="true"></span>${label}</p>`;
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return html`<div class="state empty"><p class="state-title">${title}</p>${children}</div>`;
}

/** A failed load, in the person's words, with a way to try again. */
export function Failure({ error, retry }: { error: unknown; retry?: () => void }) {
  const message = error instanceof Error ? error.message : String(error);
  return html`<div class="state failure" role="alert"><p>${message}</p>${retry && html`<button type="button" class="quiet" onClick=${retry}>Try again</button>`}</div>`;
}
