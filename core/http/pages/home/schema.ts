// What a person asked their home page to show: where they are (for the cards
// that need a place) and, per card, whether they turned it on and what they
// chose for it.
import { integer, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const homePrefs = sqliteTable("home_prefs", {
  /** The account's id; one row per account. */
  account: text("account").primaryKey(),
  /** The place as the person named it, or as the geocoder found it. */
  place: text("place"),
  lat: real("lat"),
  lon: real("lon"),
  /** Per service: { on: the card they turned on, choice: the value they picked for its `choice` argument }, as JSON. */
  cards: text("cards").notNull().default("{}"),
  updated: integer("updated").notNull(),
});
