// ctx.schedule: the instance scheduler as a capability. A plugin registers
// its firing handler in start() and sets or removes schedules from its write
// methods; the scheduler keeps one timer for the whole instance.
import type { CapabilityScope } from "../capabilities.ts";
import { defineModule } from "../module.ts";
import type { Runtime } from "../runtime.ts";
import type { Repeat } from "./recurrence.ts";
import { Scheduler, type Collection, type CollectionRound, type FiringHandler, type FiringRecord } from "./scheduler.ts";

export type { Collection, CollectionRound, Firing, FiringHandler, FiringRecord, RunReport } from "./scheduler.ts";
export { Scheduler } from "./scheduler.ts";

export interface Schedule {
  /**
   * In start(): the service's handler for its firings; catches up on what fell due while down (within `grace` ms), running it in the background.
   * `resume`: a firing taken over after a write of it committed is run again, told so (Firing.acted), rather than recorded done unrun.
   */
  handle(fn: FiringHandler, opts?: { grace?: number; resume?: boolean }): Promise<void>;
  /**
   * Adds or replaces the schedule `ref` from a write method, owned by the
   * caller and limited to its scopes (or the scopes given). Returns the first
   * firing time (ms), or null when nothing will fire. `rule`: the series as
   * RFC 5545 text, when `repeat` cannot say it (see recurrence.ts).
   */
  set(job: { ref: string; start: number; offset: number; repeat: Repeat | null; tz?: string | null; rule?: string | null; scopes?: "*" | string[] }): Promise<number | null>;
  /** Cancels the schedule `ref`; false when there was none. */
  remove(ref: string): Promise<boolean>;
  /** The next unclaimed firing (ms), null when none is left, undefined when `ref` is not scheduled. */
  next(ref: string): Promise<number | null | undefined>;
  /** Past firings of `ref`, newest first: done, failed, claimed (interrupted or under way) or missed. */
  history(ref: string, limit?: number): Promise<FiringRecord[]>;
  /** Records a round of the service's collector (a read may do it: it takes its own short write). */
  collected(round: CollectionRound): Promise<void>;
  /** How the service's collector has fared; null before its first round. */
  collection(): Promise<Collection | null>;
}

declare module "../plugin.ts" {
  interface CapabilityTypes {
    schedule: Schedule;
  }
}

const schedulers = new WeakMap<Runtime, Scheduler>();

/** The instance's scheduler; tests and the benchmark drive it with runDue(). */
export function schedulerOf(rt: Runtime): Scheduler {
  let s = schedulers.get(rt);
  if (!s) {
    s = new Scheduler(rt);
    schedulers.set(rt, s);
    const made = s;
    rt.onStop(() => made.stop());
  }
  return s;
}

function scheduleFor(scope: CapabilityScope): Schedule {
  const sch = schedulerOf(scope.rt);
  const { service, kind, caller } = scope;
  const writable = () => {
    if (kind === "read") throw new Error(`ctx.schedule changes need a write method (${service} called it from a read)`);
  };
  return {
    handle: (fn, opts) => sch.handle(service, fn, opts),
    set: (job) => (writable(), sch.set(service, caller, job)),
    remove: (ref) => (writable(), sch.remove(service, ref)),
    next: (ref) => sch.nextDue(service, ref, kind),
    history: (ref, limit) => sch.history(service, ref, kind, limit),
    collected: (round) => sch.collected(service, round),
    collection: () => sch.collection(service, kind),
  };
}

export const schedulerModule = defineModule({ name: "scheduler", provides: { capabilities: { schedule: scheduleFor } } });
