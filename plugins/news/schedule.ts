// Polling collectors on the instance scheduler. Its finest repeat is hourly,
// so "every 15 minutes" is four hourly schedules a quarter-hour apart. Each
// restart sets them again (the same refs are replaced, others removed), so
// changing the interval needs nothing but a restart.
import type { Ctx } from "../../core/plugin.ts";

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
export async function pollOnSchedule(ctx: Ctx, minutes: number, poll: (ctx: Ctx) => Promise<unknown>) {
  // Without a handler the scheduler leaves this service's schedules alone.
  if (!collects(ctx.config.HEARTH_COLLECTORS, ctx.service)) return;
  // A firing claimed a little after its minute (the timer's own lateness) still runs.
  await ctx.schedule.handle((_firing, fctx) => poll(fctx), { grace: GRACE_MS });
  await ctx.writes(() => {
    for (let m = 0; m < 60; m++) {
      const ref = `poll:${String(m).padStart(2, "0")}`;
      if (m % minutes === 0) ctx.schedule.set({ ref, start: ANCHOR + m * 60_000, offset: 0, repeat: "hourly", scopes: "*" });
      else if (ctx.schedule.next(ref) !== undefined) ctx.schedule.remove(ref);
    }
  });
}
