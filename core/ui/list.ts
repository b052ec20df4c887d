// A list a person searches as they type and walks with the arrow keys: the
// left-hand column of notes, documents, contacts. Items are links or buttons
// the view decides; this keeps the filtering, keys and empty states alike.
import type { ComponentChildren } from "preact";
import { useMemo, useRef, useState } from "preact/hooks";
import { html } from "./html.ts";
import { Empty } from "./states.ts";

export interface SearchListProps<T> {
  items: T[];
  /** The list's name for screen readers and the search field's label ("Search notes"). */
  label: string;
  /** Each item's own key (its title, its id). */
  keyOf: (item: T) => string;
  title: (item: T) => string;
  /** A muted line under the title (a date, the first words). */
  detail?: (item: T) => string;
  /** The words searched, beyond the title (default: title and detail). */
  text?: (item: T) => string;
  /** The item shown as open. */
  selected?: string | null;
  onOpen: (item: T) => void;
  /** Shown when there are no items at all. */
  empty?: ComponentChildren;
  /** The field's id, so a shortcut can focus it. */
  searchId?: string;
}

export function SearchList<T>(p: SearchListProps<T>) {
  const [q, setQ] = useState("");
  const list = useRef<HTMLUListElement>(null);
  const shown = useMemo(() => {
    const words = q.toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) return p.items;
    return p.items.filter((it) => {
      const hay = (p.text ? p.text(it) : `${p.title(it)} ${p.detail?.(it) ?? ""}`).toLowerCase();
      return words.every((w) => hay.includes(w));
    });
  }, [q, p.items]);
  const buttons = () => [...(list.current?.querySelectorAll<HTMLButtonElement>("button.item") ?? [])];
  const move = (ev: KeyboardEvent) => {
    const all = buttons();
    const at = all.indexOf(document.activeElement as HTMLButtonElement);
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      ev.preventDefault();
      const to = ev.key === "ArrowDown" ? Math.min(at + 1, all.length - 1) : at - 1;
      if (to < 0) document.getElementById(p.searchId ?? "")?.focus();
      else all[to]?.focus();
    }
  };
  const id = p.searchId ?? "list-search";
  return html`<div class="search-list" onKeyDown=${move}>
    <label class="visually-hidden" for=${id}>${p.label}</label>
    <input id=${id} type="search" placeholder=${p.label} value=${q} autocomplete="off" onInput=${(e: Event) => setQ((e.target as HTMLInputElement).value)}
      onKeyDown=${(e: KeyboardEvent) => { if (e.key === "Enter" && shown[0]) p.onOpen(shown[0]); }} />
    ${
      p.items.length === 0
        ? p.empty ?? html`<${Empty} title="Nothing here yet" />`
        : shown.length === 0
          ? html`<p class="state">Nothing matches “${q}”.</p>`
          : html`<ul ref=${list} class="items" aria-label=${p.label.replace(/^Search /i, "")}>
              ${shown.map((it) => {
                const k = p.keyOf(it);
                const on = p.selected === k;
                return html`<li key=${k}><button type="button" class=${`item${on ? " on" : ""}`} aria-current=${on ? "true" : undefined} onClick=${() => p.onOpen(it)}>
                  <span class="item-title">${p.title(it) || "Untitled"}</span>${p.detail && html`<span class="item-detail">${p.detail(it)}</span>`}
                </button></li>`;
              })}
            </ul>`
    }
  </div>`;
}
