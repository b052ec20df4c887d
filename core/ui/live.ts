// One server-sent event stream per page (/my/live), shared by every part of
// the page that listens: each hears a notice ({ service, method }) whenever a
// write of this person's went through, from any client (another tab, the
// agent, a phone syncing its calendar), and reloads what it shows.

export interface Change {
  service: string;
  method: string;
}

type Listener = (c: Change) => void;
const listeners = new Set<Listener>();
const connection: { source: EventSource | null; online: ((up: boolean) => void)[] } = { source: null, online: [] };

function open() {
  if (connection.source || typeof EventSource === "undefined") return;
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
  source.addEventListener("open", () => connection.online.forEach((fn) => fn(true)));
  source.addEventListener("error", () => connection.online.forEach((fn) => fn(false)));
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
