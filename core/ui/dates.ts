// Dates and times in the person's own words: the browser's language and time
// zone. A formatter (Intl.DateTimeFormat) is slow to make and quick to use:
// the page's first loads its language's data, and each one after builds its
// patterns, while Date's toLocaleString & co. make a new one on every call (a
// month of the calendar made fifty, and that was most of its first draw). So
// each kind is made once per page and kept; and in English the shapes screens
// show most are written without one (core/ui/plaindates.ts) until a worker,
// off the page's thread, has checked they say what the browser's formatter
// says. Where one does not, the page is drawn again with the formatter's.
import { afterFirstDraw } from "./later.ts";
import { checkDates, optionsKey, plainDates } from "./plaindates.ts";

const made = new Map<string, Intl.DateTimeFormat>();
let plain = typeof navigator === "undefined" ? null : plainDates(navigator.language);
let check: "not yet" | "running" | "done" = "not yet";
const afterCheck: (() => void)[] = [];
const redraws = new Set<() => void>();

/** The page's one formatter for these options, made on first use. */
export function dateFormat(options: Intl.DateTimeFormatOptions = {}): Intl.DateTimeFormat {
  const key = optionsKey(options);
  let f = made.get(key);
  if (!f) made.set(key, (f = new Intl.DateTimeFormat(undefined, options)));
  return f;
}

/**
 * `formatDate(iso, { dateStyle: "medium", timeStyle: "short" })`: what
 * `new Date(iso).toLocaleString(undefined, options)` says, with the options
 * naming the fields to show (a date, a time or both), from a kept formatter.
 */
export function formatDate(when: Date | string | number, options: Intl.DateTimeFormatOptions): string {
  const d = when instanceof Date ? when : new Date(when);
  if (Number.isNaN(d.getTime())) return "Invalid Date";
  const key = optionsKey(options);
  const write = made.has(key) ? undefined : plain?.get(key);
  if (!write) return dateFormat(options).format(d);
  startCheck();
  return write(d);
}

/** Called when dates drawn in plain words turned out to differ from the browser's: the page draws itself again. Returns the function that stops it. */
export function onDatesCorrected(fn: () => void): () => void {
  redraws.add(fn);
  return () => void redraws.delete(fn);
}

/**
 * Once the page has drawn and is idle, a worker formats a year's sample of
 * every plain shape with the browser's own formatters and names those that
 * differ; they are dropped, and the page redrawn. Without the worker (none,
 * or a page without its address) every plain shape is dropped the same way.
 */
function startCheck() {
  if (check !== "not yet" || !plain) return;
  check = "running";
  // Not in the first idle moment after the first draw, which comes before the person's first click can be answered.
  afterFirstDraw(() => {
    const url = document.querySelector<HTMLMetaElement>('meta[name="dates-check"]')?.content;
    if (!url || typeof Worker === "undefined") return checked(null);
    const samples: [string, number[], string][] = [];
    for (const [key, write] of plain!)
      for (const [y, m, day, h, min] of checkDates()) {
        const d = new Date(y, m, day, h, min);
        samples.push([key, [d.getFullYear(), d.getMonth(), d.getDate(), d.getHours(), d.getMinutes()], write(d)]);
      }
    try {
      const w = new Worker(url);
      // One answer is all it gives: ended then, so the page does not keep a thread for it.
      w.onmessage = (e: MessageEvent<string[]>) => {
        w.terminate();
        checked(Array.isArray(e.data) ? e.data : null);
      };
      w.onerror = () => {
        w.terminate();
        checked(null);
      };
      w.postMessage(samples);
    } catch {
      checked(null);
    }
  }, 1000);
}

function checked(wrong: string[] | null) {
  if (check === "done") return;
  check = "done";
  if (wrong === null) plain = null;
  else for (const k of wrong) plain?.delete(k);
  if (wrong === null || wrong.length > 0) for (const fn of redraws) fn();
  for (const fn of afterCheck.splice(0)) fn();
}

/**
 * Makes these formatters soon, each in a task of its own: a view that always
 * shows dates calls it as its module loads, so they are made while its first
 * read is on its way rather than while it draws the answer (an answer that
 * arrives meanwhile waits for one formatter at most). Not when the page is
 * idle: a page still loading is not, so that came only after the answer.
 * Shapes written in plain words need none; while the worker checks those, the
 * rest wait for it, since it loads the language's data they would load.
 */
export function prepareDates(...kinds: Intl.DateTimeFormatOptions[]): void {
  const wanted = kinds.filter((o) => !plain?.has(optionsKey(o)));
  const next = () => {
    const o = wanted.shift();
    if (!o) return;
    if (check === "running") return void afterCheck.push(() => setTimeout(() => (wanted.unshift(o), next()), 0));
    dateFormat(o);
    setTimeout(next, 0);
  };
  setTimeout(next, 0);
}
