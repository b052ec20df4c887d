// Polling collectors on the instance scheduler. Its finest repeat is hourly,
// so "every 15 minutes" is four hourly schedules a quarter-hour apart. Each
// restart sets them again (the same refs are replaced, others removed), so
// changing the interval needs nothing but a restart.
import type { Ctx } from "../../core/plugin.ts";

const STEPS = [5, 10, 15, 20, 30, 60];
/** Any past hour on the hour; the schedules repeat hourly from it. */
const ANCHOR = Date.UTC(2026, 0, 1, 0, 0, 0);

export function pollMinutes(raw: string | undefined, fallback: number, setting: string): number {
  const n = Number(raw || fallback);
  if (!STEPS.includes(n)) throw new Error(`${setting} must be one of ${STEPS.join(", ")} minutes (got ${JSON.stringify(raw)})`);
  return n;
}

/**
 * In a plugin's start(): runs `poll` every `minutes`, on the minutes that are
 * multiples of it. A poll missed while the instance was down is not replayed;
 * the next one is at most `minutes` away.
 */
export async function pollOnSchedule(ctx: Ctx, minutes: number, poll: (ctx: Ctx) => Promise<unknown>) {
  await ctx.schedule.handle((_firing, fctx) => poll(fctx));
  await ctx.writes(() => {
    for (let m = 0; m < 60; m++) {
      const ref = `poll:${String(m).padStart(2, "0")}`;
      if (m % minutes === 0) ctx.schedule.set({ ref, start: ANCHOR + m * 60_000, offset: 0, repeat: "hourly", scopes: "*" });
      else if (ctx.schedule.next(ref) !== undefined) ctx.schedule.remove(ref);
    }
  });
}
