// The day's reflection: one verse, one saying and one name, chosen from the
// UTC date alone so that everyone who asks on a given day reads the same three.
import { HADITH_COLLECTION, hadithRef, loadHadith, loadNames, loadQuran, verseRef, type Book, type Chapter, type Hadith } from "./texts.ts";

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

let pools: Promise<{ verses: [Chapter, Chapter["verses"][number]][]; sayings: [Book, Hadith][] }> | null = null;

function candidates() {
  pools ??= Promise.all([loadQuran(), loadHadith()]).then(([quran, books]) => ({
    verses: quran.flatMap((c) => c.verses.filter((v) => v.translation.length <= MAX_VERSE).map((v) => [c, v] as [Chapter, typeof v])),
    // Sayings that quote the Prophet, so the reading is a saying rather than a narration of events.
    sayings: books.flatMap((b) =>
      b.hadiths.filter((h) => h.text.length <= MAX_SAYING && /\bsaid\b|\bsaying\b/i.test(h.text)).map((h) => [b, h] as [Book, Hadith]),
    ),
  }));
  return pools;
}

export async function reflectionFor(day: string) {
  const [{ verses, sayings }, names] = await Promise.all([candidates(), loadNames()]);
  const [chapter, verse] = verses[fnv1a(`verse:${day}`) % verses.length];
  const [book, hadith] = sayings[fnv1a(`saying:${day}`) % sayings.length];
  const name = names[fnv1a(`name:${day}`) % names.length];
  return {
    date: day,
    verse: {
      reference: verseRef(chapter, verse),
      surah: { number: chapter.id, name: chapter.name, transliteration: chapter.transliteration, meaning: chapter.translation },
      verse: verse.id,
      text: verse.text,
      translation: verse.translation,
    },
    saying: {
      reference: hadithRef(book, hadith),
      collection: HADITH_COLLECTION,
      book: book.book,
      book_title: book.title,
      number: hadith.n,
      narrator: hadith.narrator,
      text: hadith.text,
    },
    name: { number: name.number, arabic: name.arabic, transliteration: name.transliteration, meaning: name.meaning, description: name.description },
  };
}
