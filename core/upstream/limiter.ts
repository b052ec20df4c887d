// Per-provider gates: a cap on requests in flight and a sliding-window rate
// cap, so the instance keeps to each provider's published policy however
// many callers arrive at once. Real time, not the injected clock: the
// provider counts wall-clock seconds.
import { HearthError } from "../errors.ts";
import type { RateCap } from "./providers.ts";

export interface Timer {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const realTimer: Timer = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};

export class Gate {
  private active = 0;
  private queue: (() => void)[] = [];
  /** Start times reserved by recent and waiting requests, ascending. */
  private starts: number[] = [];

  constructor(
    readonly label: string,
    private concurrency: number,
    private rate: RateCap | undefined,
    private timer: Timer = realTimer,
  ) {}

  /**
   * Waits for a start slot and a free place in flight; returns the release.
   * A slot further away than maxWaitMs is refused at once with 503 and a
   * Retry-After, rather than holding the caller.
   */
  async enter(maxWaitMs: number): Promise<() => void> {
    if (this.rate) {
      const now = this.timer.now();
      const { count, perMs } = this.rate;
      this.starts = this.starts.filter((t) => t > now - perMs);
      const slot = this.starts.length < count ? now : Math.max(now, this.starts[this.starts.length - count] + perMs);
      if (slot - now > maxWaitMs) {
        const seconds = Math.max(1, Math.ceil((slot - now) / 1000));
        throw new HearthError(
          "upstream_unavailable",
          `${this.label} allows ${count} request(s) per ${perMs / 1000} s and that quota is used up: try again in ${seconds} s`,
          {
            retry: true,
            headers: { "Retry-After": String(seconds) },
          },
        );
      }
      this.starts.push(slot);
      if (slot > now) await this.timer.sleep(slot - now);
    }
    // A releasing request hands its place straight to the next in line; a
    // line longer than a few rounds of the cap means the provider is stuck.
    if (this.active < this.concurrency) this.active++;
    else {
      if (this.queue.length >= this.concurrency * 16)
        throw new HearthError(
          "upstream_unavailable",
          `${this.label} is answering slowly and ${this.queue.length} requests are waiting for it: try again shortly`,
          {
            retry: true,
            headers: { "Retry-After": "5" },
          },
        );
      await new Promise<void>((r) => this.queue.push(r));
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue.shift();
      if (next) next();
      else this.active--;
    };
  }

  get inFlight() {
    return this.active;
  }
}
