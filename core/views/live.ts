// /my/live: one server-sent event stream per signed-in page, carrying a notice
// ({ service, method }) each time a write of this person's is committed, from
// any client and any instance of the deployment (the notices travel through
// rt.shared). A notice names no record and carries none of its data: the page
// asks the API again, with the same checks as ever.
import type { Runtime } from "../runtime.ts";

const channel = (account: string) => `views:changes:${account}`;

/** Makes dispatch's change notices travel to the person's pages. */
export function tellPages(rt: Runtime) {
  const notice = (c: { service: string; method: string }) => JSON.stringify({ service: c.service, method: c.method });
  rt.changed = (c) => rt.shared.publish(channel(c.account), notice(c));
}

const encoder = new TextEncoder();

/** Each runtime's open streams, ended when it stops: a page's stream reconnects to whichever runtime serves next (a restore opens a new one). */
const open = new WeakMap<Runtime, Set<() => void>>();
function streamsOf(rt: Runtime): Set<() => void> {
  let set = open.get(rt);
  if (!set) {
    const made = new Set<() => void>();
    open.set(rt, made);
    rt.onStop(() => {
      for (const end of [...made]) end();
    });
    set = made;
  }
  return set;
}
// Under Bun's default idle timeout (10 s), so a quiet page's stream stays open.
const HEARTBEAT_MS = 8000;

export function liveStream(rt: Runtime, account: string): Response {
  let stop = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (text: string) => {
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          stop();
        }
      };
      send("retry: 3000\n\n: listening\n\n");
      const unsubscribe = rt.shared.subscribe(channel(account), (m) => send(`event: change\ndata: ${m}\n\n`));
      const beat = setInterval(() => send(": \n\n"), HEARTBEAT_MS);
      const streams = streamsOf(rt);
      const end = () => {
        stop();
        try {
          controller.close();
        } catch {}
      };
      stop = () => {
        clearInterval(beat);
        unsubscribe();
        streams.delete(end);
      };
      streams.add(end);
    },
    cancel() {
      stop();
    },
  });
  return new Response(body, {
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff", "x-accel-buffering": "no" },
  });
}
