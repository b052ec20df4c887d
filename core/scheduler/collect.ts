// Polling collectors on the instance scheduler. Its finest repeat is hourly,
// so "every 15 minutes" is four hourly schedules a quarter-hour apart. Each
// restart sets them again (the same refs are replaced, others removed), so
// changing the interval needs nothing but a restart.
import { mapAnswer } from "../answer.ts";
import type { Ctx } from "../plugin.ts";
import type { CollectionRound } from "./index.ts";

const STEPS = [5, 10, 15, 20, 30, 60];
const GRACE_MS = 2 * 60_000;
/** Any past hour on the hour; the schedules repeat hourly from it. */
const ANCHOR = Date.UTC(2026, 0, 1, 0, 0, 0);

/** HEARTH_COLLECTORS: "on" (default), "off", or the services that collect ("news,video"). */
export function collects(setting: string | undefined, service: string): boolean {
  const s = (setting ?? "on").trim().toLowerCase();
  if (s === "on" || s === "") return true;
  if (s === "off") return false;
  return s.split(/[\s,]+/).includes(service);
}

/**
 * One warning for a round of polls, however many sources failed in it, with
 * each failure in its fields: an instance that cannot reach the internet
 * would otherwise log a line per feed and channel every round.
 */
export function warnFailures(ctx: Ctx, what: string, total: number, failed: unknown[]) {
  if (failed.length) ctx.log.warn(`${ctx.service}: ${failed.length} of ${total} ${what} could not be read`, { failed });
}

export function pollMinutes(raw: string | undefined, fallback: number, setting: string): number {
  const n = Number(raw || fallback);
  if (!STEPS.includes(n)) throw new Error(`${setting} must be one of ${STEPS.join(", ")} minutes (got ${JSON.stringify(raw)})`);
  return n;
}

/**
 * In a plugin's start(): runs `poll` every `minutes`, on the minutes that are
 * multiples of it. A poll missed while the instance was down is not replayed
 * (unless it fell due in the last two minutes); the next one is at most
 * `minutes` away. HEARTH_COLLECTORS=off (tests of
 * other services), or a list without this service, leaves them unscheduled.
 */
export async function pollOnSchedule(ctx: Ctx, minutes: number, poll: (ctx: Ctx) => Promise<CollectionRound>) {
  // Without a handler the scheduler leaves this service's schedules alone.
  if (!collects(ctx.config.HEARTH_COLLECTORS, ctx.service)) return;
  // A firing claimed a little after its minute (the timer's own lateness) still runs.
  await ctx.schedule.handle((_firing, fctx) => collectRound(fctx, poll), { grace: GRACE_MS });
  await ctx.writes(async () => {
    for (let m = 0; m < 60; m++) {
      const ref = `poll:${String(m).padStart(2, "0")}`;
      if (m % minutes === 0) await ctx.schedule.set({ ref, start: ANCHOR + m * 60_000, offset: 0, repeat: "hourly", scopes: "*" });
      else if ((await ctx.schedule.next(ref)) !== undefined) await ctx.schedule.remove(ref);
    }
  });
}

/** Runs one round of the collector and records how it went, for the answers' freshness and the back-off. */
export async function collectRound<R extends CollectionRound>(ctx: Ctx, poll: (ctx: Ctx) => Promise<R>): Promise<R> {
  const round = await poll(ctx);
  await ctx.schedule.collected(round);
  return round;
}

/** After rounds in which no source answered, the next one from a request waits 1, 2, 4… minutes, at most the poll interval. */
function backoffMs(failures: number, minutes: number): number {
  return Math.min(60_000 * 2 ** Math.min(failures - 1, 10), minutes * 60_000);
}

/**
 * Whether a method may run a round itself, on the request path: not while a
 * failed round is recent, so a provider that is down costs each caller
 * nothing but the answer saying so.
 */
export function mayCollect(ctx: Ctx, minutes: number, restAfterSuccess = false): Promise<boolean> {
  return mapAnswer(ctx.schedule.collection(), (c) => {
    if (!c) return true;
    const rest = c.failures > 0 ? backoffMs(c.failures, minutes) : restAfterSuccess ? minutes * 60_000 : 0;
    return ctx.clock.now().getTime() - c.attempted >= rest;
  });
}

/**
 * A method answering from what was collected runs a round when it holds
 * nothing yet, unless one failed recently or one worked (and found nothing)
 * within the poll interval.
 */
export async function warm(ctx: Ctx, minutes: number, holdsAny: () => boolean | Promise<boolean>, poll: (ctx: Ctx) => Promise<CollectionRound>) {
  if (!(await holdsAny()) && (await mayCollect(ctx, minutes, true))) await collectRound(ctx, poll);
}

/**
 * What an answer says about its collection: `stale` when no round has
 * reached a source, the last one failed, or none has succeeded within two
 * poll intervals; when a round last succeeded; and why the last one failed.
 */
export function freshness(ctx: Ctx, minutes: number): Promise<{ stale: boolean; last_success: string | null; error: string | null }> {
  return mapAnswer(ctx.schedule.collection(), (c) => {
    const now = ctx.clock.now().getTime();
    const succeeded = c?.succeeded ?? null;
    return {
      stale: succeeded === null || (c?.failures ?? 0) > 0 || now - succeeded > 2 * minutes * 60_000,
      last_success: succeeded === null ? null : new Date(succeeded).toISOString(),
      error: c?.error ?? null,
    };
  });
}
