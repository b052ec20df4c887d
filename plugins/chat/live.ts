// Live delivery of new messages to browsers over Server-Sent Events. One hub
// per running instance (keyed by its settings object, which each instance
// owns), so two instances in one process never hear each other's rooms. A
// message goes out through ctx.broadcast, so listeners connected to any
// instance of the deployment hear it, whichever instance it was posted on.
import type { Broadcast } from "hearth";

export interface LiveMessage {
  id: number;
  room: string;
  author: string;
  content: string;
  at: string;
}

type Listener = (m: LiveMessage) => void;

const TOPIC = "messages";

export class Hub {
  private rooms = new Map<string, Set<Listener>>();
  count = 0;

  constructor(private broadcast: Broadcast) {
    broadcast.subscribe(TOPIC, (text) => this.deliver(JSON.parse(text) as LiveMessage));
  }

  subscribe(room: string, fn: Listener): () => void {
    let set = this.rooms.get(room);
    if (!set) this.rooms.set(room, (set = new Set()));
    set.add(fn);
    this.count++;
    return () => {
      if (set.delete(fn)) this.count--;
      if (set.size === 0) this.rooms.delete(room);
    };
  }

  /** Tells every instance's listeners in the message's room. */
  publish(m: LiveMessage) {
    this.broadcast.publish(TOPIC, JSON.stringify(m));
  }

  private deliver(m: LiveMessage) {
    for (const fn of this.rooms.get(m.room) ?? []) fn(m);
  }
}

const hubs = new WeakMap<object, Hub>();
export function hubFor(instance: object, broadcast: Broadcast): Hub {
  let hub = hubs.get(instance);
  if (!hub) hubs.set(instance, (hub = new Hub(broadcast)));
  return hub;
}

const encoder = new TextEncoder();
export const sseEvent = (m: LiveMessage) => encoder.encode(`id: ${m.id}\nevent: message\ndata: ${JSON.stringify(m)}\n\n`);

// Under Bun's default idle timeout (10 s), so a quiet room's connection stays open.
const HEARTBEAT_MS = 8000;

/**
 * An event stream that first replays `backlog`, then carries each new message in the room until the client goes.
 * It listens before the backlog is read to the end, holding what arrives meanwhile, so a message
 * published while the backlog is being read is sent once, in order, and never lost.
 */
export function eventStream(hub: Hub, room: string, backlog: Promise<LiveMessage[]>): Response {
  let stop = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode("retry: 3000\n\n"));
      let last = 0;
      const send = (m: LiveMessage) => {
        if (m.id <= last) return;
        last = m.id;
        try {
          controller.enqueue(sseEvent(m));
        } catch {
          stop();
        }
      };
      let held: LiveMessage[] | null = [];
      const unsubscribe = hub.subscribe(room, (m) => (held ? held.push(m) : send(m)));
      void backlog.then(
        (past) => {
          for (const m of [...past, ...(held ?? [])]) send(m);
          held = null;
        },
        () => {
          stop();
          try {
            controller.close();
          } catch {
            // Already gone.
          }
        },
      );
      const beat = setInterval(() => {
        try {
          controller.enqueue(encoder.encode(": ping\n\n"));
        } catch {
          stop();
        }
      }, HEARTBEAT_MS);
      stop = () => {
        clearInterval(beat);
        unsubscribe();
      };
    },
    cancel() {
      stop();
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
      "x-content-type-options": "nosniff",
    },
  });
}
