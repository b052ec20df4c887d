// What a person asked their home page to show: where they are (for the
// weather and prayer times) and whether they want the prayer times at all.
import { integer, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const homePrefs = sqliteTable("home_prefs", {
  /** The account's id; one row per account. */
  account: text("account").primaryKey(),
  /** The place as the person named it, or as the geocoder found it. */
  place: text("place"),
  lat: real("lat"),
  lon: real("lon"),
  /** 1 when the person asked for today's prayer times. */
  prayer: integer("prayer").notNull().default(0),
  /** The prayer times' twilight convention (prayer/times `method`); null keeps its default. */
  prayerMethod: text("prayer_method"),
  updated: integer("updated").notNull(),
});
