// One server-sent event stream per page (/my/live), shared by every part of
// the page that listens: each hears a notice ({ service, method }) whenever a
// write of this person's went through, from any client (another tab, the
// agent, a phone syncing its calendar), and reloads what it shows.

export interface Change {
  service: string;
  method: string;
}

import { afterFirstDraw } from "./later.ts";

type Listener = (c: Change) => void;
const listeners = new Set<Listener>();
const connection: { source: EventSource | null; open: boolean; online: ((up: boolean) => void)[] } = { source: null, open: false, online: [] };

let asked = false;

/**
 * The stream is asked for once the view is drawn and the page idle, not as the view's effects first run: its request,
 * its opening and the reads made again when it opens (onceLive) would otherwise all come between the first draw and
 * the person's first click. Nothing is missed meanwhile: each read taken before it opened is made again then.
 */
function open() {
  if (asked || typeof EventSource === "undefined") return;
  asked = true;
  afterFirstDraw(connect, 1000);
}

/** Whether the stream is open now, so a read sent now misses no change told from here on. */
export const isLive = () => connection.open;

function connect() {
  const source = new EventSource("/my/live");
  connection.source = source;
  source.addEventListener("change", (ev) => {
    let c: Change;
    try {
      c = JSON.parse((ev as MessageEvent<string>).data) as Change;
    } catch {
      return;
    }
    for (const fn of [...listeners]) fn(c);
  });
  // EventSource reconnects by itself; the page is told so it can say it is offline meanwhile.
  source.addEventListener("open", () => {
    connection.open = true;
    [...connection.online].forEach((fn) => fn(true));
  });
  source.addEventListener("error", () => {
    connection.open = false;
    [...connection.online].forEach((fn) => fn(false));
  });
}

/**
 * Calls handler on each change to this person's records; `services` narrows
 * it to those ("notes"). Returns the function that stops listening (a
 * component's effect returns it).
 */
export function live(handler: Listener, services?: string[]): () => void {
  const fn: Listener = services ? (c) => services.includes(c.service) && handler(c) : handler;
  listeners.add(fn);
  open();
  return () => listeners.delete(fn);
}

/** fn is told when the stream to the server drops (false) and comes back (true). */
export function onConnection(fn: (up: boolean) => void) {
  connection.online.push(fn);
  open();
}

/**
 * fn once the stream is open (at once if it is), so it is told of every change
 * from then on: what was read before that moment may have missed one. Returns
 * the function that cancels it.
 */
export function onceLive(fn: () => void): () => void {
  let done = false;
  const once = (up: boolean) => {
    if (!up || done) return;
    done = true;
    connection.online.splice(connection.online.indexOf(once), 1);
    fn();
  };
  if (connection.open) {
    fn();
    return () => {};
  }
  connection.online.push(once);
  open();
  return () => {
    if (done) return;
    done = true;
    const i = connection.online.indexOf(once);
    if (i >= 0) connection.online.splice(i, 1);
  };
}
