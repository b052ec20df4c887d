// The texts this service reads from, loaded once per process on first use so
// an instance that never asks about them never parses them.
//  - Quran: Uthmani text with the Saheeh International translation, from the
//    quran-json package (CC BY-SA 4.0).
//  - Hadith: Sahih al-Bukhari in English, 97 books, shipped in data/ (see data/SOURCES.md).
//  - The names of Allah: the 99 names with meanings, shipped in data/.

export interface Chapter {
  id: number;
  name: string;
  transliteration: string;
  translation: string;
  type: "meccan" | "medinan";
  total_verses: number;
  verses: { id: number; text: string; translation: string }[];
}

export interface Hadith {
  n: number;
  narrator: string;
  text: string;
}

export interface Book {
  book: number;
  title: string;
  hadiths: Hadith[];
}

export interface Name {
  number: number;
  arabic: string;
  transliteration: string;
  meaning: string;
  description: string;
  found: string;
}

export const QURAN_SOURCE = "Quran text (Uthmani) and Saheeh International translation, via the quran-json package (CC BY-SA 4.0)";
export const HADITH_COLLECTION = "Sahih al-Bukhari";
export const HADITH_SOURCE = "Sahih al-Bukhari, English translation by M. Muhsin Khan, as compiled in the hadith-json dataset";

let quran: Promise<Chapter[]> | null = null;
let bukhari: Promise<Book[]> | null = null;
let names: Promise<Name[]> | null = null;

export function loadQuran(): Promise<Chapter[]> {
  quran ??= import("quran-json/dist/quran_en.json", { with: { type: "json" } }).then((m) => m.default as unknown as Chapter[]);
  return quran;
}

export function loadHadith(): Promise<Book[]> {
  bukhari ??= import("./data/bukhari.json", { with: { type: "json" } }).then((m) => (m.default as unknown as { books: Book[] }).books);
  return bukhari;
}

export function loadNames(): Promise<Name[]> {
  names ??= import("./data/names.json", { with: { type: "json" } }).then((m) => m.default as unknown as Name[]);
  return names;
}

export const verseRef = (c: Chapter, v: { id: number }) => `${c.transliteration} ${c.id}:${v.id}`;
export const hadithRef = (b: Book, h: Hadith) => `${HADITH_COLLECTION}, book ${b.book} (${b.title}), hadith ${h.n}`;
