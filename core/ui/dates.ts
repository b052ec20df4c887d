// Dates and times in the person's own words: the browser's language and time
// zone. A formatter (Intl.DateTimeFormat) is slow to make and quick to use:
// the page's first loads its language's data, and each one after builds its
// patterns, while Date's toLocaleString & co. make a new one on every call (a
// month of the calendar made fifty, and that was most of its first draw). So
// each kind is made once per page and kept.

const made = new Map<string, Intl.DateTimeFormat>();

/** The page's one formatter for these options, made on first use. */
export function dateFormat(options: Intl.DateTimeFormatOptions = {}): Intl.DateTimeFormat {
  const key = JSON.stringify(options);
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
  return Number.isNaN(d.getTime()) ? "Invalid Date" : dateFormat(options).format(d);
}

/**
 * Makes these formatters soon, each in a task of its own: a view that always
 * shows dates calls it as its module loads, so they are made while its first
 * read is on its way rather than while it draws the answer (an answer that
 * arrives meanwhile waits for one formatter at most). Not when the page is
 * idle: a page still loading is not, so that came only after the answer.
 */
export function prepareDates(...kinds: Intl.DateTimeFormatOptions[]): void {
  const next = () => {
    const o = kinds.shift();
    if (!o) return;
    dateFormat(o);
    setTimeout(next, 0);
  };
  setTimeout(next, 0);
}
