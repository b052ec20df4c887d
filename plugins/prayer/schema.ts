import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * The public texts fetched once from their keyless sources (Sahih al-Bukhari,
 * the names of Allah), kept so that later calls, and restarts, need no network.
 * One row per text, in the shape of the PRAYER_DATA file that would replace it.
 */
export const prayerTexts = sqliteTable("prayer_texts", {
  /** "hadith" or "names". */
  name: text("name").primaryKey(),
  /** Where it was fetched from. */
  url: text("url").notNull(),
  /** When (ms since epoch, instance clock). */
  fetched: integer("fetched").notNull(),
  /** The text as JSON, in the PRAYER_DATA file's format. */
  body: text("body").notNull(),
});
