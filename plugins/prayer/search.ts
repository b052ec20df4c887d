// Search over the shipped texts. They are the same for every instance and
// never change, so they live in a process-wide in-memory FTS5 table built on
// first use (about a tenth of a second) rather than in each instance's
// database; ctx.index keeps what the instance itself writes (reflections).
import { Database } from "bun:sqlite";
import { hadithRef, loadHadith, loadNames, loadQuran, verseRef } from "./texts.ts";

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

let built: Promise<Database> | null = null;

function build(): Promise<Database> {
  built ??= (async () => {
    const [quran, books, names] = await Promise.all([loadQuran(), loadHadith(), loadNames()]);
    const db = new Database(":memory:");
    db.run("CREATE VIRTUAL TABLE texts USING fts5(kind UNINDEXED, ref UNINDEXED, title, body, tokenize = 'porter unicode61 remove_diacritics 2')");
    const ins = db.prepare("INSERT INTO texts (kind, ref, title, body) VALUES (?, ?, ?, ?)");
    db.transaction(() => {
      for (const c of quran) for (const v of c.verses) ins.run("quran", `${c.id}:${v.id}`, `${c.transliteration} ${c.translation}`, v.translation);
      for (const b of books) for (const h of b.hadiths) ins.run("hadith", `${b.book}:${h.n}`, b.title, `${h.narrator}. ${h.text}`);
      for (const n of names) ins.run("name", String(n.number), `${n.transliteration} ${n.meaning}`, n.description);
    })();
    return db;
  })();
  return built;
}

/** The words of a question as an FTS5 OR-query of prefixes, or null when nothing is left to search for. */
export function questionQuery(text: string): string | null {
  const words = (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 1 && !STOP.has(w));
  if (words.length === 0) return null;
  const all = words.flatMap((w) => [w, ...(RELATED[w] ?? [])]);
  return [...new Set(all)].slice(0, 32).map((w) => `"${w}"*`).join(" OR ");
}

export async function searchTexts(query: string, perKind: { quran: number; hadith: number; name: number }) {
  const match = questionQuery(query);
  const [db, quran, books, names] = await Promise.all([build(), loadQuran(), loadHadith(), loadNames()]);
  const found = (kind: string, limit: number) =>
    match
      ? db
          .query<{ ref: string; snippet: string; rank: number }, [string, string, number]>(
            "SELECT ref, snippet(texts, 3, '', '', '…', 32) AS snippet, bm25(texts, 0, 0, 1.0, 1.0) AS rank FROM texts WHERE texts MATCH ? AND kind = ? ORDER BY rank LIMIT ?",
          )
          .all(match, kind, limit)
      : [];

  const verses = found("quran", perKind.quran).map((r) => {
    const [c, v] = r.ref.split(":").map(Number);
    const chapter = quran[c - 1];
    const verse = chapter.verses[v - 1];
    return { reference: verseRef(chapter, verse), chapter: c, verse: v, text: verse.text, translation: verse.translation };
  });
  const hadith = found("hadith", perKind.hadith).map((r) => {
    const [b, n] = r.ref.split(":").map(Number);
    const book = books.find((x) => x.book === b)!;
    const h = book.hadiths.find((x) => x.n === n)!;
    return { reference: hadithRef(book, h), book: b, number: n, narrator: h.narrator, excerpt: r.snippet, text: h.text };
  });
  const nameHits = found("name", perKind.name).map((r) => names[Number(r.ref) - 1]);
  return { verses, hadith, names: nameHits };
}
