// The header's search across everything, keyboard first: `/` focuses it, the
// results of every service appear as one types, ↑/↓ move through them, Enter
// opens one (or, with none chosen, the page of all results), Escape closes.
// Without script the same field submits to /my/search.
import { render } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { html } from "./html.ts";

interface Found {
  service: string;
  title: string;
  items: { title: string; detail?: string; href: string }[];
  error?: string;
}

function Results({ input }: { input: HTMLInputElement }) {
  const [found, setFound] = useState<Found[] | null>(null);
  const [active, setActive] = useState(-1);
  const [open, setOpen] = useState(false);
  const seq = useRef(0);
  const flat = [...(found ?? []).flatMap((f) => f.items), { title: "", href: `/my/search?q=${encodeURIComponent(input.value.trim())}` }];
  const state = useRef({ flat, active, open });
  state.current = { flat, active, open };
  // Bound as it is drawn (a layout effect), not after the next paint: drawn on the field's first focus, the letter
  // typed next must be heard.
  useLayoutEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ask = async () => {
      const q = input.value.trim();
      const mine = ++seq.current;
      if (!q) return void (setFound(null), setOpen(false));
      try {
        const res = await fetch(`/my/find?q=${encodeURIComponent(q)}`, { credentials: "same-origin" });
        const body = (await res.json()) as { result?: Found[] };
        if (mine !== seq.current) return;
        const fresh = body.result ?? [];
        // Answers keep coming as one types: the item the arrows chose stays chosen while it is still found.
        const { flat: before, active: at } = state.current;
        const chosen = at >= 0 ? before[at]?.href : undefined;
        const items = fresh.flatMap((f) => f.items);
        setFound(fresh);
        setActive(chosen ? items.findIndex((i) => i.href === chosen) : -1);
        setOpen(true);
      } catch {
        if (mine === seq.current) setFound(null);
      }
    };
    const onInput = () => {
      clearTimeout(timer);
      timer = setTimeout(() => void ask(), 180);
    };
    const onKey = (ev: KeyboardEvent) => {
      const { flat: items, active: at, open: shown } = state.current;
      if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
        if (!items.length) return;
        ev.preventDefault();
        setOpen(true);
        setActive(ev.key === "ArrowDown" ? Math.min(at + 1, items.length - 1) : Math.max(at - 1, -1));
      } else if (ev.key === "Enter" && shown && at >= 0 && items[at]) {
        ev.preventDefault();
        location.assign(items[at].href);
      } else if (ev.key === "Escape") {
        if (shown) {
          ev.preventDefault();
          ev.stopPropagation();
          setOpen(false);
        } else input.blur();
      }
    };
    const onBlur = (ev: FocusEvent) => {
      if (!(ev.relatedTarget instanceof Node && input.form?.contains(ev.relatedTarget))) setOpen(false);
    };
    input.addEventListener("input", onInput);
    input.addEventListener("keydown", onKey);
    input.addEventListener("blur", onBlur);
    input.addEventListener("focus", () => found && setOpen(true));
    // Drawn after the person began typing: what they typed is asked for now.
    if (input.value.trim() && document.activeElement === input) onInput();
    return () => {
      input.removeEventListener("input", onInput);
      input.removeEventListener("keydown", onKey);
      input.removeEventListener("blur", onBlur);
    };
  }, []);
  useEffect(() => {
    input.setAttribute("aria-expanded", String(open && found !== null));
    if (active >= 0) input.setAttribute("aria-activedescendant", `find-${active}`);
    else input.removeAttribute("aria-activedescendant");
  }, [open, active, found]);
  if (!open || found === null) return null;
  const all = `/my/search?q=${encodeURIComponent(input.value.trim())}`;
  let n = 0;
  const option = (at: number, href: string, body: unknown, cls: string) =>
    html`<a role="option" id=${`find-${at}`} aria-selected=${at === active} class=${`${cls}${at === active ? " on" : ""}`} href=${href} tabindex="-1" onMouseDown=${(e: MouseEvent) => e.preventDefault()}>${body}</a>`;
  return html`<div class="find-results">
    ${found.length === 0 && html`<p class="state">Nothing matches.</p>`}
    <div role="listbox" id="find-results" aria-label="Search results">
      ${found.map(
        (f) => html`<div role="group" aria-label=${f.title} class="find-group"><div class="find-title" aria-hidden="true">${f.title}${f.error ? ` (not searched: ${f.error})` : ""}</div>
          ${f.items.map((i) => option(n++, i.href, html`<span class="item-title">${i.title}</span>${i.detail && html`<span class="item-detail">${i.detail}</span>`}`, "find-item"))}
        </div>`,
      )}
      ${option(n, all, html`All results for “${input.value.trim()}”`, "find-all")}
    </div>
  </div>`;
}

/**
 * Makes the header's search field (#find) a combobox of live results, and `/` focus it. With `later`, its results
 * are drawn when that runs them or when the field is first focused, whichever comes first (a screen's first draw
 * need not wait for a list nobody has asked for yet).
 */
export function enhanceFind(o: { later?: (fn: () => void) => void } = {}) {
  const input = document.getElementById("find") as HTMLInputElement | null;
  const form = input?.form;
  if (!input || !form) return;
  input.setAttribute("role", "combobox");
  input.setAttribute("aria-autocomplete", "list");
  input.setAttribute("aria-controls", "find-results");
  input.setAttribute("aria-expanded", "false");
  let drawn = false;
  const draw = () => {
    if (drawn) return;
    drawn = true;
    input.removeEventListener("focus", draw);
    const host = document.createElement("div");
    host.className = "find-host";
    form.append(host);
    render(html`<${Results} input=${input} />`, host);
  };
  if (o.later) {
    input.addEventListener("focus", draw);
    o.later(draw);
    if (document.activeElement === input) draw();
  } else draw();
  document.addEventListener("keydown", (ev) => {
    const t = ev.target as HTMLElement;
    if (ev.key !== "/" || ev.ctrlKey || ev.metaKey || ev.altKey || t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)) return;
    ev.preventDefault();
    input.focus();
    input.select();
  });
}
