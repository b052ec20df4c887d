// The day's reflection: one verse, one saying and one name, chosen from the
// UTC date alone so that everyone who asks on a given day reads the same three.
// The verse is always there; the saying and the name whenever their texts can
// be had (the owner's files, or the public copies kept here), and when a source
// cannot be reached yet the answer says so and which part is missing.
import {
  hadithRef,
  loadHadith,
  loadNames,
  loadQuran,
  QURAN_SOURCE,
  settled,
  verseRef,
  type Book,
  type Chapter,
  type Hadith,
  type HadithCollection,
  type TextsCtx,
} from "./texts.ts";

// Long passages make a poor daily reading; these bounds keep it to a few lines.
const MAX_VERSE = 400;
const MAX_SAYING = 700;

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

let verses: Promise<[Chapter, Chapter["verses"][number]][]> | null = null;
const versePool = () => {
  verses ??= loadQuran().then((quran) =>
    quran.flatMap((c) => c.verses.filter((v) => v.translation.length <= MAX_VERSE).map((v) => [c, v] as [Chapter, typeof v])),
  );
  return verses;
};

const sayingPools = new WeakMap<HadithCollection, [Book, Hadith][]>();
function sayingPool(c: HadithCollection): [Book, Hadith][] {
  let pool = sayingPools.get(c);
  if (!pool) {
    const all = c.books.flatMap((b) => b.hadiths.map((h) => [b, h] as [Book, Hadith]));
    // Sayings that quote the Prophet, so the reading is a saying rather than a
    // narration of events; a collection with none such still gives a reading.
    const quoted = all.filter(([, h]) => h.text.length <= MAX_SAYING && /\bsaid\b|\bsaying\b/i.test(h.text));
    pool = quoted.length ? quoted : all;
    sayingPools.set(c, pool);
  }
  return pool;
}

export async function reflectionFor(day: string, ctx: TextsCtx) {
  const [pool, hadithText, namesText] = await Promise.all([versePool(), settled(loadHadith(ctx)), settled(loadNames(ctx))]);
  const [chapter, verse] = pool[fnv1a(`verse:${day}`) % pool.length];
  const unavailable: { saying?: string; name?: string } = {};
  const hadith = "data" in hadithText ? hadithText.data : null;
  const names = "data" in namesText ? namesText.data : null;
  let saying = null;
  if (hadith) {
    const sayings = sayingPool(hadith);
    const [book, h] = sayings[fnv1a(`saying:${day}`) % sayings.length];
    saying = {
      reference: hadithRef(hadith, book, h),
      collection: hadith.collection,
      book: book.book,
      book_title: book.title,
      number: h.n,
      narrator: h.narrator,
      text: h.text,
    };
  } else if ("failed" in hadithText) unavailable.saying = `No saying of the Prophet yet today: ${hadithText.failed} Ask again later.`;
  let name = null;
  if (names) {
    const n = names[fnv1a(`name:${day}`) % names.length];
    name = { number: n.number, arabic: n.arabic, transliteration: n.transliteration, meaning: n.meaning, description: n.description };
  } else if ("failed" in namesText) unavailable.name = `No name of Allah yet today: ${namesText.failed} Ask again later.`;
  return {
    date: day,
    verse: {
      reference: verseRef(chapter, verse),
      surah: { number: chapter.id, name: chapter.name, transliteration: chapter.transliteration, meaning: chapter.translation },
      verse: verse.id,
      text: verse.text,
      translation: verse.translation,
    },
    saying,
    name,
    ...(Object.keys(unavailable).length ? { unavailable } : {}),
    sources: { quran: QURAN_SOURCE, ...("source" in hadithText ? { hadith: hadithText.source } : {}), ...("source" in namesText ? { names: namesText.source } : {}) },
  };
}
