// Reading and keeping what a person asked their home page to show.
import { eq } from "drizzle-orm";
import type { Runtime } from "../../../runtime.ts";
import { homePrefs } from "./schema.ts";

/** Per service: whether the person turned its card on, and what they chose for its `choice` argument. */
export type CardPrefs = Record<string, { on?: boolean; choice?: string | null }>;

export interface Prefs {
  place: string | null;
  lat: number | null;
  lon: number | null;
  cards: CardPrefs;
}

export const NO_PREFS: Prefs = { place: null, lat: null, lon: null, cards: {} };

function parseCards(text: string): CardPrefs {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as CardPrefs) : {};
  } catch {
    return {};
  }
}

export async function prefsOf(rt: Runtime, account: string): Promise<Prefs> {
  const row = await rt.store.rdb.select().from(homePrefs).where(eq(homePrefs.account, account)).get();
  if (!row) return NO_PREFS;
  return { place: row.place, lat: row.lat, lon: row.lon, cards: parseCards(row.cards) };
}

export async function keepPrefs(rt: Runtime, account: string, p: Prefs): Promise<void> {
  const values = { place: p.place, lat: p.lat, lon: p.lon, cards: JSON.stringify(p.cards), updated: rt.clock.now().getTime() };
  await rt.store.write(() =>
    rt.store.wdb
      .insert(homePrefs)
      .values({ account, ...values })
      .onConflictDoUpdate({ target: homePrefs.account, set: values })
      .run(),
  );
}
