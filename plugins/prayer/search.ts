// Search over the texts. They are read-only reference texts, so each lives in
// an in-memory FTS5 table built on its first search (about a tenth of a second
// for a whole collection) rather than in each instance's database; ctx.index
// keeps what the instance itself writes (reflections). The Quran's table is
// built once per process, a hadith or names text's once per version of it.
import { Database } from "bun:sqlite";
import {
  hadithRef,
  loadHadith,
  loadNames,
  loadQuran,
  QURAN_SOURCE,
  settled,
  verseRef,
  type Chapter,
  type HadithCollection,
  type Name,
  type TextsCtx,
} from "./texts.ts";

// Words that say nothing about a question's subject; dropping them lets the
// words that remain rank the passages (any-word match, best first).
const STOP = new Set(
  "a an and are as at be but by can do does did for from has have how i if in is it its me my of on or our so that the their them then there these they this to us was we what when where which who whom why will with would you your about into upon than not no say says said tell quran hadith allah god".split(
    " ",
  ),
);

// A question asks in everyday English; the translations often say it another
// way (or keep the Arabic word). Each asked word also looks for these.
const RELATED: Record<string, string[]> = {
  patience: ["patient", "sabr", "persevere"],
  patient: ["patience", "persevere"],
  charity: ["zakat", "sadaqa", "alms", "spend"],
  fasting: ["fast", "ramadan", "sawm"],
  fast: ["fasting", "ramadan"],
  prayer: ["pray", "salat", "prostrate"],
  pray: ["prayer", "salat"],
  pilgrimage: ["hajj", "umrah"],
  parents: ["mother", "father"],
  anger: ["angry", "wrath"],
  angry: ["anger"],
  honesty: ["truth", "truthful", "honest"],
  lying: ["lie", "liar", "falsehood"],
  death: ["die", "dies", "grave"],
  paradise: ["garden", "gardens", "jannah"],
  hell: ["fire", "hellfire"],
  forgiveness: ["forgive", "pardon"],
  repentance: ["repent", "tawba"],
  mercy: ["merciful", "compassion"],
  gratitude: ["grateful", "thank", "thankful"],
  orphans: ["orphan"],
  neighbours: ["neighbour", "neighbor"],
  knowledge: ["learn", "learning", "knowledge"],
};

/** The words of a question as an FTS5 OR-query of prefixes, or null when nothing is left to search for. */
export function questionQuery(text: string): string | null {
  const words = (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 1 && !STOP.has(w));
  if (words.length === 0) return null;
  const all = words.flatMap((w) => [w, ...(RELATED[w] ?? [])]);
  return [...new Set(all)].slice(0, 32).map((w) => `"${w}"*`).join(" OR ");
}

type Row = [ref: string, title: string, body: string];

function table(rows: Iterable<Row>): Database {
  const db = new Database(":memory:");
  db.run("CREATE VIRTUAL TABLE texts USING fts5(ref UNINDEXED, title, body, tokenize = 'porter unicode61 remove_diacritics 2')");
  const ins = db.prepare("INSERT INTO texts (ref, title, body) VALUES (?, ?, ?)");
  db.transaction(() => {
    for (const r of rows) ins.run(...r);
  })();
  return db;
}

function* quranRows(quran: Chapter[]): Iterable<Row> {
  for (const c of quran) for (const v of c.verses) yield [`${c.id}:${v.id}`, `${c.transliteration} ${c.translation}`, v.translation];
}
function* hadithRows(c: HadithCollection): Iterable<Row> {
  for (const b of c.books) for (const h of b.hadiths) yield [`${b.book}:${h.n}`, b.title, `${h.narrator}. ${h.text}`];
}
function* nameRows(names: Name[]): Iterable<Row> {
  for (const [i, n] of names.entries()) yield [String(i), `${n.transliteration} ${n.meaning}`, n.description];
}

let quranTable: Promise<Database> | null = null;
// A replaced file is a new object, so its old table goes with it.
const tables = new WeakMap<object, Database>();
function tableOf<D extends object>(data: D, rows: (d: D) => Iterable<Row>): Database {
  let db = tables.get(data);
  if (!db) tables.set(data, (db = table(rows(data))));
  return db;
}

function found(db: Database, match: string | null, limit: number) {
  if (!match) return [];
  return db
    .query<{ ref: string; snippet: string }, [string, number]>(
      "SELECT ref, snippet(texts, 2, '', '', '…', 32) AS snippet FROM texts WHERE texts MATCH ? ORDER BY bm25(texts, 0, 1.0, 1.0) LIMIT ?",
    )
    .all(match, limit);
}

export async function searchTexts(query: string, ctx: TextsCtx, perKind: { quran: number; hadith: number; name: number }) {
  const match = questionQuery(query);
  quranTable ??= loadQuran().then((q) => table(quranRows(q)));
  const [quran, quranDb, hadithText, namesText] = await Promise.all([loadQuran(), quranTable, settled(loadHadith(ctx)), settled(loadNames(ctx))]);
  const collection = "data" in hadithText ? hadithText.data : null;
  const names = "data" in namesText ? namesText.data : null;
  const searched = ["the Quran (Saheeh International translation)"];
  const unavailable: { hadith?: string; names?: string } = {};

  const verses = found(quranDb, match, perKind.quran).map((r) => {
    const [c, v] = r.ref.split(":").map(Number);
    const chapter = quran[c - 1];
    const verse = chapter.verses[v - 1];
    return { reference: verseRef(chapter, verse), chapter: c, verse: v, text: verse.text, translation: verse.translation };
  });

  let hadith;
  if (collection) {
    searched.push(collection.collection);
    hadith = found(tableOf(collection, hadithRows), match, perKind.hadith).map((r) => {
      const [b, n] = r.ref.split(":").map(Number);
      const book = collection.books.find((x) => x.book === b)!;
      const h = book.hadiths.find((x) => x.n === n)!;
      return { reference: hadithRef(collection, book, h), book: b, number: n, narrator: h.narrator, excerpt: r.snippet, text: h.text };
    });
  } else if ("failed" in hadithText) unavailable.hadith = `Hadith not searched: ${hadithText.failed} Ask again later.`;

  let nameHits;
  if (names) {
    searched.push("the names of Allah");
    nameHits = found(tableOf(names, nameRows), match, perKind.name).map((r) => names[Number(r.ref)]);
  } else if ("failed" in namesText) unavailable.names = `The names of Allah not searched: ${namesText.failed} Ask again later.`;

  return {
    searched,
    verses,
    ...(hadith ? { hadith } : {}),
    ...(nameHits ? { names: nameHits } : {}),
    ...(Object.keys(unavailable).length ? { unavailable } : {}),
    sources: { quran: QURAN_SOURCE, ...("source" in hadithText ? { hadith: hadithText.source } : {}), ...("source" in namesText ? { names: namesText.source } : {}) },
  };
}
