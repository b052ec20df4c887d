// Archive sizes of feeds in the catalogue, from each publisher's
// Content-Length (a HEAD request), remembered for a month and asked for a
// few at a time so one listing never fans out across a whole country.
import { inArray } from "drizzle-orm";
import type { Ctx } from "hearth";
import { transitSizes } from "./schema.ts";

const FRESH_MS = 30 * 86_400_000;
const ASK_AT_ONCE = 12;

export async function knownSizes(ctx: Ctx, urls: string[]): Promise<Map<string, number | null>> {
  const out = new Map<string, number | null>();
  if (!urls.length) return out;
  const now = ctx.clock.now().getTime();
  const held = new Map<string, { size: number | null; checked: number }>();
  for (let i = 0; i < urls.length; i += 500)
    for (const r of await ctx.db.select().from(transitSizes).where(inArray(transitSizes.url, urls.slice(i, i + 500))).all()) held.set(r.url, r);
  const ask = urls.filter((u) => !held.has(u) || now - held.get(u)!.checked > FRESH_MS).slice(0, ASK_AT_ONCE);
  const learnt = await Promise.all(
    ask.map(async (url) => {
      try {
        const r = await ctx.bytes.get("GTFS", url, { method: "HEAD" });
        return { url, size: r.size, checked: now };
      } catch {
        return { url, size: null, checked: now };
      }
    }),
  );
  if (learnt.length)
    await ctx.writes(async (db) => {
      for (const l of learnt) await db.insert(transitSizes).values(l).onConflictDoUpdate({ target: transitSizes.url, set: { size: l.size, checked: l.checked } }).run();
    });
  for (const [u, r] of held) out.set(u, r.size);
  for (const l of learnt) out.set(l.url, l.size);
  return out;
}
