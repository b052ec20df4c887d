// Mounts a view into the shell page the core served (core/views/shell.ts):
// the view itself, the toasts, the notice that the server is out of reach,
// and `?` for the list of shortcuts. Called by the entry the core bundles
// around each view's module, never by the view.
import { render, type ComponentType } from "preact";
import { useErrorBoundary, useEffect, useState } from "preact/hooks";
import { html } from "./html.ts";
import { shortcuts, useKeys } from "./keys.ts";
import { onConnection } from "./live.ts";
import { Failure } from "./states.ts";
import { Toasts } from "./toast.ts";
import { enhanceFind } from "./find.ts";
import { confirmShortcuts } from "./help.ts";
import { registerWorker } from "./offline.ts";
import { dropPageAnswers } from "./first.ts";
import { onDatesCorrected } from "./dates.ts";
import { afterFirstDraw } from "./later.ts";

function Offline() {
  const [online, setOnline] = useState(navigator.onLine);
  useEffect(() => {
    const on = () => setOnline(true);
    const off = () => setOnline(false);
    window.addEventListener("online", on);
    window.addEventListener("offline", off);
    onConnection(setOnline);
    return () => {
      window.removeEventListener("online", on);
      window.removeEventListener("offline", off);
    };
  }, []);
  return online ? null : html`<p class="offline" role="alert">Offline: the server cannot be reached. What you see may be out of date, and changes are not saved until it is back.</p>`;
}

function Shell({ View }: { View: ComponentType }) {
  const [error, reset] = useErrorBoundary();
  // Dates drawn in plain words that the browser's formatter says otherwise are drawn again, with its words.
  const [, redraw] = useState(0);
  useEffect(() => onDatesCorrected(() => redraw((n) => n + 1)), []);
  useKeys([
    { key: "?", does: "Show keyboard shortcuts", run: () => void confirmShortcuts(shortcuts()) },
    { key: "/", does: "Search everything", run: () => document.getElementById("find")?.focus() },
  ]);
  return html`<${Offline} />
    ${error ? html`<${Failure} error=${error} retry=${reset} />` : html`<${View} />`}
    <${Toasts} />`;
}

export function boot(View: ComponentType) {
  const root = document.getElementById("view");
  if (!root) throw new Error("the shell page has no #view");
  root.textContent = "";
  render(html`<${Shell} View=${View} />`, root);
  dropPageAnswers();
  closeHeaderMenus();
  // Measured in the frame that paints the view: read at once, the page's whole layout would be made inside the view's
  // first draw, making its one long task longer, then again for the frame if anything changed meanwhile.
  requestAnimationFrame(showCurrentScreen);
  // Neither the header's live search (the field submits to the search page without it, and `/` reaches it at once)
  // nor the app's worker (its install fetches and keeps the bundles) is what the person came for: both wait until
  // the view is drawn and the page idle, so the first click is not kept waiting behind them.
  enhanceFind({ later: afterFirstDraw });
  afterFirstDraw(() => void registerWorker());
}

/**
 * The header's menus are plain disclosures (they open without script on every page); where script runs, they also
 * close as a menu does: on Escape (focus back on the menu's button) or a click anywhere else.
 */
function closeHeaderMenus() {
  const menus = () => Array.from(document.querySelectorAll<HTMLDetailsElement>("header.site details[open]"));
  document.addEventListener("click", (e) => {
    for (const d of menus()) if (!d.contains(e.target as Node)) d.open = false;
  });
  document.addEventListener("keydown", (e) => {
    if (e.key !== "Escape") return;
    for (const d of menus()) {
      d.open = false;
      if (d.contains(document.activeElement)) d.querySelector("summary")?.focus();
    }
  });
}

/**
 * A page of the instance that is not a screen (the home page): the notice
 * that the server is out of reach above its content, the app's worker (which
 * keeps the page for when it is), and the header's live search.
 */
export function bootPage() {
  const main = document.getElementById("main");
  if (main) {
    const host = document.createElement("div");
    main.prepend(host);
    render(html`<${Offline} />`, host);
  }
  enhanceFind();
  registerWorker();
  showCurrentScreen();
  closeHeaderMenus();
}

/** On a phone the row of screens scrolls sideways: the one open is brought into it, so a person sees where they are. */
function showCurrentScreen() {
  const current = document.querySelector<HTMLElement>(".approw .screens [aria-current=page]");
  const row = current?.closest<HTMLElement>(".screens");
  if (!current || !row || row.scrollWidth <= row.clientWidth) return;
  row.scrollLeft = current.offsetLeft - (row.clientWidth - current.offsetWidth) / 2;
}
