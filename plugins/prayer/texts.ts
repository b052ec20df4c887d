// The texts this service reads from, each parsed once on first use so an
// instance that never asks about them never pays for them.
//  - Quran: Uthmani text with the Saheeh International translation, from the
//    quran-json package (CC BY-SA 4.0); always present.
//  - Hadith (Sahih al-Bukhari) and the names of Allah: a file the owner puts in
//    the folder PRAYER_DATA names (bukhari.json, names.json; see README.md)
//    when there is one, else the public copy this instance fetched once and
//    keeps in its database (sources.ts).
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { Type as T, type Static, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { HearthError, notConfigured, readShippedJson, type Ctx } from "hearth";
import quranFile from "quran-json/dist/quran_en.json" with { type: "file" };
import { publicHadith, publicNames, PUBLIC_HADITH_SOURCE, PUBLIC_NAMES_SOURCE } from "./sources.ts";

export interface Chapter {
  id: number;
  name: string;
  transliteration: string;
  translation: string;
  type: "meccan" | "medinan";
  total_verses: number;
  verses: { id: number; text: string; translation: string }[];
}

const HadithSchema = T.Object({ n: T.Integer({ minimum: 1 }), narrator: T.String(), text: T.String({ minLength: 1 }) });
const BookSchema = T.Object({ book: T.Integer({ minimum: 1 }), title: T.String({ minLength: 1 }), hadiths: T.Array(HadithSchema, { minItems: 1 }) });
const HadithFileSchema = T.Object({ collection: T.String({ minLength: 1 }), books: T.Array(BookSchema, { minItems: 1 }) });
const NameSchema = T.Object({
  number: T.Integer({ minimum: 1 }),
  arabic: T.String(),
  transliteration: T.String({ minLength: 1 }),
  meaning: T.String({ minLength: 1 }),
  description: T.String(),
  found: T.Optional(T.String()),
});
const NamesFileSchema = T.Array(NameSchema, { minItems: 1 });

export type Hadith = Static<typeof HadithSchema>;
export type Book = Static<typeof BookSchema>;
export type HadithCollection = Static<typeof HadithFileSchema>;
export type Name = Static<typeof NameSchema>;

export const QURAN_SOURCE = "Quran text (Uthmani) and Saheeh International translation, via the quran-json package (CC BY-SA 4.0)";
export const HADITH_FILE = "bukhari.json";
export const NAMES_FILE = "names.json";
const HADITH_FORMAT = 'Sahih al-Bukhari in English as {"collection", "books": [{"book", "title", "hadiths": [{"n", "narrator", "text"}]}]}';
const NAMES_FORMAT = 'the names of Allah as [{"number", "arabic", "transliteration", "meaning", "description", "found"}]';

export const hadithSource = (c: HadithCollection) => `${c.collection}, from this instance's PRAYER_DATA/${HADITH_FILE}`;
export const NAMES_SOURCE = `The names of Allah, from this instance's PRAYER_DATA/${NAMES_FILE}`;

const malformed = (file: string, what: string) => notConfigured(`PRAYER_DATA/${file} is malformed: ${what}; it should hold ${file === HADITH_FILE ? HADITH_FORMAT : NAMES_FORMAT}.`);

/** "/books/3/hadiths/0/text" -> "books[3].hadiths[0].text" */
const pathName = (p: string) =>
  p
    .split("/")
    .filter(Boolean)
    .map((s) => (/^\d+$/.test(s) ? `[${s}]` : `.${s}`))
    .join("")
    .replace(/^\./, "") || "the whole file";

function checked<S extends TSchema>(file: string, schema: S, v: unknown): Static<S> {
  const err = Value.Errors(schema, v).First();
  if (err) throw malformed(file, `${pathName(err.path)}: ${err.message === "Expected required property" ? "missing" : err.message.toLowerCase()}`);
  return v as Static<S>;
}

function unique(file: string, what: string, values: number[], where: string) {
  const seen = new Set<number>();
  for (const v of values) {
    if (seen.has(v)) throw malformed(file, `${where} has ${what} ${v} twice`);
    seen.add(v);
  }
}

// Keyed by the file's path, and reread when its size or modification time
// changes, so an owner who adds or fixes a file need not restart.
const cache = new Map<string, { stamp: string; value: Promise<unknown> }>();

function readData<V>(dir: string, file: string, parse: (v: unknown) => V): Promise<V | null> {
  if (!dir) return Promise.resolve(null);
  const path = resolve(dir, file);
  let stamp: string;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw malformed(file, "it is not a file");
    stamp = `${st.size}:${st.mtimeMs}`;
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return Promise.resolve(null);
    if (code) throw notConfigured(`PRAYER_DATA/${file} cannot be read (${code}).`);
    throw e;
  }
  const hit = cache.get(path);
  if (hit?.stamp === stamp) return hit.value as Promise<V>;
  const value = Bun.file(path)
    .text()
    .catch((e) => {
      throw notConfigured(`PRAYER_DATA/${file} cannot be read (${(e as { code?: string }).code ?? "read failed"}).`);
    })
    .then((text) => {
      let v: unknown;
      try {
        v = JSON.parse(text);
      } catch (e) {
        throw malformed(file, `it is not JSON (${(e as Error).message})`);
      }
      return parse(v);
    });
  cache.set(path, { stamp, value });
  return value;
}

let quran: Promise<Chapter[]> | null = null;

export function loadQuran(): Promise<Chapter[]> {
  quran ??= readShippedJson<Chapter[]>(quranFile);
  return quran;
}

/** The hadith collection in PRAYER_DATA, or null when there is none. */
export function loadHadithFile(dir: string): Promise<HadithCollection | null> {
  return readData(dir, HADITH_FILE, (v) => {
    const c = checked(HADITH_FILE, HadithFileSchema, v);
    unique(HADITH_FILE, "book", c.books.map((b) => b.book), "books");
    for (const [i, b] of c.books.entries()) unique(HADITH_FILE, "hadith", b.hadiths.map((h) => h.n), `books[${i}]`);
    return c;
  });
}

/** The names of Allah in PRAYER_DATA, or null when there are none. */
export function loadNamesFile(dir: string): Promise<Name[] | null> {
  return readData(dir, NAMES_FILE, (v) => {
    const names = checked(NAMES_FILE, NamesFileSchema, v);
    unique(NAMES_FILE, "number", names.map((n) => n.number), "the list");
    return names;
  });
}

/** A text with what to cite for it. */
export interface Loaded<T> {
  data: T;
  source: string;
}

export type TextsCtx = Pick<Ctx, "config" | "db" | "bytes" | "writes" | "clock" | "log">;

export const dataDir = (config: Readonly<Record<string, string>>) => config.PRAYER_DATA ?? "";

/**
 * Sahih al-Bukhari: the owner's PRAYER_DATA/bukhari.json when there is one,
 * else the public copy (fetched on first need and kept). A source that cannot
 * be reached throws an upstream_* error, never a made-up text.
 */
export async function loadHadith(ctx: TextsCtx): Promise<Loaded<HadithCollection>> {
  const own = await loadHadithFile(dataDir(ctx.config));
  if (own) return { data: own, source: hadithSource(own) };
  return { data: await publicHadith(ctx), source: PUBLIC_HADITH_SOURCE };
}

/** The names of Allah: the owner's PRAYER_DATA/names.json when there is one, else the public copy. */
export async function loadNames(ctx: TextsCtx): Promise<Loaded<Name[]>> {
  const own = await loadNamesFile(dataDir(ctx.config));
  if (own) return { data: own, source: NAMES_SOURCE };
  return { data: await publicNames(ctx), source: PUBLIC_NAMES_SOURCE };
}

/** A text that could not be had, said for an answer's `unavailable`; anything but a source's failure is thrown on. */
export async function settled<T>(load: Promise<Loaded<T>>): Promise<Loaded<T> | { failed: string }> {
  try {
    return await load;
  } catch (e) {
    if (e instanceof HearthError && e.kind.startsWith("upstream_")) return { failed: e.message.replace(/[.\s]*$/, ".") };
    throw e;
  }
}

export const verseRef = (c: Chapter, v: { id: number }) => `${c.transliteration} ${c.id}:${v.id}`;
export const hadithRef = (c: HadithCollection, b: Book, h: Hadith) => `${c.collection}, book ${b.book} (${b.title}), hadith ${h.n}`;
