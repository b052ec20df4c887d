// Reading and keeping what a person asked their home page to show.
import { eq } from "drizzle-orm";
import type { Runtime } from "../../../runtime.ts";
import { homePrefs } from "./schema.ts";

export interface Prefs {
  place: string | null;
  lat: number | null;
  lon: number | null;
  prayer: boolean;
  prayerMethod: string | null;
}

export const NO_PREFS: Prefs = { place: null, lat: null, lon: null, prayer: false, prayerMethod: null };

export function prefsOf(rt: Runtime, account: string): Prefs {
  const row = rt.store.rdb.select().from(homePrefs).where(eq(homePrefs.account, account)).get();
  if (!row) return NO_PREFS;
  return { place: row.place, lat: row.lat, lon: row.lon, prayer: row.prayer === 1, prayerMethod: row.prayerMethod };
}

export async function keepPrefs(rt: Runtime, account: string, p: Prefs): Promise<void> {
  const values = { place: p.place, lat: p.lat, lon: p.lon, prayer: p.prayer ? 1 : 0, prayerMethod: p.prayerMethod, updated: rt.clock.now().getTime() };
  await rt.store.write(() => {
    rt.store.wdb
      .insert(homePrefs)
      .values({ account, ...values })
      .onConflictDoUpdate({ target: homePrefs.account, set: values })
      .run();
  });
}
