// What every kind of shared state keeps the same way: this instance's
// listeners by channel, and a bounded wait on the server that holds the rest.
import type { Logger } from "../plugin.ts";

export type Listener = (message: string) => void;

/** This instance's listeners, by channel. */
export class Subscribers {
  private channels = new Map<string, Set<Listener>>();

  /** With `keepChannels`, a channel stays known once its last listener goes (a server subscription made for it stays too). */
  constructor(
    private log?: Pick<Logger, "warn">,
    private keepChannels = false,
  ) {}

  /** Adds fn to channel; `first` when the channel had no listener known before. */
  add(channel: string, fn: Listener): { stop: () => void; first: boolean } {
    let set = this.channels.get(channel);
    const first = !set;
    if (!set) this.channels.set(channel, (set = new Set()));
    set.add(fn);
    return {
      first,
      stop: () => {
        set.delete(fn);
        if (!set.size && !this.keepChannels) this.channels.delete(channel);
      },
    };
  }

  names(): Iterable<string> {
    return this.channels.keys();
  }

  /** Tells each listener of channel; one that throws is logged and does not keep the message from the others. */
  deliver(channel: string, message: string) {
    for (const fn of this.channels.get(channel) ?? []) {
      try {
        fn(message);
      } catch (e) {
        this.log?.warn("shared state: a subscriber failed", { channel, error: String(e) });
      }
    }
  }
}

/** A command slower than this is taken as its server being unreachable. */
export const COMMAND_MS = 1000;
/** How long a server that let a command time out is passed over. */
export const SLOW_PAUSE_MS = 5_000;

/**
 * What the command answers, or undefined when it fails or takes longer than
 * COMMAND_MS; then `slow` is told, so the caller can pass the server over a while.
 */
export async function within<T>(command: () => Promise<T>, slow: () => void): Promise<T | undefined> {
  let timer: Timer | undefined;
  try {
    return await Promise.race([
      command(),
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => {
          slow();
          resolve(undefined);
        }, COMMAND_MS);
      }),
    ]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
