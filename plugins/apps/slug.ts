// App addresses: /apps/<slug>. A slug is lower-case letters, digits and single
// dashes; words the apps pages use for themselves are never slugs.
import { sql } from "drizzle-orm";
import type { Db } from "hearth";
import { apps } from "./schema.ts";

export const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const RESERVED = new Set(["run", "new", "search", "tags", "store", "frame", "api", "static", "sdk"]);

export const reserved = (slug: string) => RESERVED.has(slug);

/** The URL-friendly form of a name: "Habit Tracker!" -> "habit-tracker". */
export function slugify(name: string): string {
  const s = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48)
    .replace(/-+$/, "");
  return s || "app";
}

const taken = async (db: Db, slug: string) => !!(await db.select({ id: apps.id }).from(apps).where(sql`${apps.slug} = ${slug}`).get());

export async function isTaken(db: Db, slug: string): Promise<boolean> {
  return reserved(slug) || (await taken(db, slug));
}

/** The base itself when free, else base-2, base-3, ... */
export async function freeSlug(db: Db, base: string): Promise<string> {
  if (!(await isTaken(db, base))) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!(await isTaken(db, candidate))) return candidate;
  }
}
