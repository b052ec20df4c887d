// Work a screen needs soon but not for its first draw (the app's worker, the
// header's live search, checking the plain dates): run once the page has
// drawn and then been idle twice. An idle callback asked for as the view is
// first drawn runs in the first idle moment after that draw's frame, before
// anything asked for in that frame, so the person's first click would wait
// for it; asked for from there, it comes after them.

/** Runs fn after the page's next two idle moments (at most `timeout` ms each), or soon where there are none. */
export function afterFirstDraw(fn: () => void, timeout = 2000): void {
  if (typeof requestIdleCallback !== "function") return void setTimeout(fn, 50);
  requestIdleCallback(() => requestIdleCallback(() => fn(), { timeout }), { timeout });
}
