// Parts of one screen each showing the shared Loading at once, then their
// answers, in whichever order they arrive. `?shape=whole` waits for the list
// with one notice for the whole screen first (a single element, then several);
// `?shape=siblings` shows both notices side by side in one parent.
import { html, Loading, navigate, useParams, useQuery } from "hearth/ui";

function Part({ name }: { name: string }) {
  const q = useQuery<{ name: string }>("waits/wait", { name });
  if (q.data === undefined) return html`<${Loading} label=${`Loading ${name}…`} />`;
  return html`<article><h2>${name}</h2><p class=${`done-${name}`}>${name} arrived</p></article>`;
}

export default function Waits() {
  const params = useParams();
  const part = params.get("part") ?? "part";
  const list = useQuery<{ name: string }>("waits/wait", { name: "list" });
  if (params.get("shape") === "whole" && list.data === undefined) return html`<${Loading} label="Loading the list…" />`;
  // Both notices side by side in one parent, neither keyed: the first replaced while the second stays, or the other way.
  if (params.get("shape") === "siblings")
    return html`<div class="two">
      ${list.data === undefined ? html`<${Loading} label="Loading the list…" />` : html`<ul><li class="done-list">list arrived</li></ul>`}
      <${Part} name=${part} />
    </div>`;
  return html`<style>.two { display: flex; gap: 1rem; }</style>
    <div class="two">
      <section aria-label="List">${list.data === undefined ? html`<${Loading} label="Loading the list…" />` : html`<ul><li class="done-list">list arrived</li></ul>`}
        <button type="button" onClick=${() => navigate({ part: "other" })}>Other</button></section>
      <section aria-label="Part"><${Part} key=${part} name=${part} /></section>
    </div>`;
}
