import { Type as T } from "@sinclair/typebox";
import { invalid, notFound, definePlugin, read } from "hearth";
import { qibla } from "./qibla.ts";
import { reflectionFor } from "./reflection.ts";
import { searchTexts } from "./search.ts";
import { prayerTexts } from "./schema.ts";
import { HADITH_PROVIDER, NAMES_PROVIDER } from "./sources.ts";
import { QURAN_SOURCE, hadithRef, loadHadith, loadQuran, verseRef } from "./texts.ts";
import { conventionNames, prayerTimes } from "./times.ts";
import { prayerCard } from "./card.ts";

const Lat = T.Number({ minimum: -90, maximum: 90, description: "Latitude in decimal degrees." });
const Lon = T.Number({ minimum: -180, maximum: 180, description: "Longitude in decimal degrees." });
// Sahih al-Bukhari has 97 books; the owner's file may hold fewer.
const BOOKS = 97;

// The instance archives each day's reflection once; this remembers, per running
// instance (its config object), the last day already written.
const archived = new WeakMap<object, string>();

export default definePlugin({
  name: "prayer",
  card: prayerCard,
  description:
    "Prayer times and the qibla by calculation and the Quran (shipped with the instance), and Sahih al-Bukhari and the names of Allah from public sources, fetched once and kept (or from the owner's PRAYER_DATA files; see plugins/prayer/README.md).",
  needs: ["index", "db", "bytes", "writes"],
  tables: { prayerTexts },
  providers: [HADITH_PROVIDER, NAMES_PROVIDER],
  config: {
    PRAYER_DATA: {
      default: "",
      description:
        "Folder holding bukhari.json (Sahih al-Bukhari in English) and/or names.json (the names of Allah), read at run time in place of the public copies; see plugins/prayer/README.md for their format. Empty: both come from their public sources.",
    },
    PRAYER_HADITH_URL: {
      default: "",
      description: "Base URL of the hadith-api collection Sahih al-Bukhari is fetched from once (https://cdn.jsdelivr.net/gh/fawazahmed0/hadith-api@1 when empty).",
    },
    PRAYER_NAMES_URL: {
      default: "",
      description:
        "Base URL the names of Allah are fetched from once, as names/data/names.json (https://cdn.jsdelivr.net/gh/asim/reminder@086425d562c19bef59c2644d1f634a1d987622ea when empty).",
    },
  },
  methods: {
    times: read({
      description:
        "Today's prayer times (Fajr, sunrise, Dhuhr, Asr, Maghrib, Isha) at a location, in its time zone, and which prayer is next. `method` picks the twilight convention: isna (default, 15°/15°), mwl (18°/17°), egypt (19.5°/17.5°), karachi (18°/18°), gulf (19.5°, Isha 90 min after Maghrib), diyanet (18°/17°), muis (20°/18°), jakim (20°/18°).",
      args: T.Object({
        lat: Lat,
        lon: Lon,
        tz: T.String({ default: "UTC", minLength: 1, maxLength: 64, description: "IANA time zone, e.g. Europe/London (default UTC)." }),
        method: T.Union(
          conventionNames.map((n) => T.Literal(n)),
          { default: "isna", description: "Calculation convention (default isna)." },
        ),
      }),
      access: "public",
      run: ({ lat, lon, tz, method }, ctx) => prayerTimes(lat, lon, tz, method, ctx.clock.now()),
    }),

    qibla: read({
      description: "Compass bearing to face for prayer: degrees clockwise from true north towards the Kaaba, with the distance to it.",
      args: T.Object({ lat: Lat, lon: Lon }),
      access: "public",
      run: ({ lat, lon }) => qibla(lat, lon),
    }),

    verse: read({
      description: "A chapter (surah) of the Quran in Arabic with its English translation, or one verse of it when `verse` is given.",
      args: T.Object({
        chapter: T.Integer({ minimum: 1, maximum: 114, description: "Chapter (surah) number, 1-114." }),
        verse: T.Optional(T.Integer({ minimum: 1, description: "Verse number within the chapter; omit for the whole chapter." })),
      }),
      access: "public",
      async run({ chapter, verse }) {
        const c = (await loadQuran())[chapter - 1];
        const surah = { number: c.id, name: c.name, transliteration: c.transliteration, meaning: c.translation, revealed: c.type, verses: c.total_verses };
        if (verse !== undefined) {
          if (verse > c.total_verses) throw invalid("verse", `chapter ${chapter} (${c.transliteration}) has ${c.total_verses} verses (got ${verse})`);
          const v = c.verses[verse - 1];
          return { reference: verseRef(c, v), surah, verse: { number: v.id, text: v.text, translation: v.translation }, source: QURAN_SOURCE };
        }
        return {
          reference: `${c.transliteration} ${c.id}`,
          surah,
          verses: c.verses.map((v) => ({ number: v.id, text: v.text, translation: v.translation })),
          source: QURAN_SOURCE,
        };
      },
    }),

    saying: read({
      description: `A hadith (saying of the Prophet) from Sahih al-Bukhari in English, chosen at random; \`book\` (1-${BOOKS}) keeps to one of its books. The collection is fetched once from its public source and kept (or read from the owner's PRAYER_DATA/bukhari.json).`,
      args: T.Object({
        book: T.Optional(T.Integer({ minimum: 1, maximum: BOOKS, description: `Book number within Sahih al-Bukhari, 1-${BOOKS}; omit for any book.` })),
      }),
      access: "public",
      openWorld: true,
      async run({ book }, ctx) {
        const { data: collection, source } = await loadHadith(ctx);
        const books = collection.books;
        let b;
        let h;
        if (book !== undefined) {
          b = books.find((x) => x.book === book);
          if (!b) {
            const held = books.map((x) => x.book).join(", ");
            throw notFound(`${collection.collection} as provided here has no book ${book} (it has ${books.length === 1 ? "book" : "books"} ${held}).`);
          }
          h = b.hadiths[Math.floor(Math.random() * b.hadiths.length)];
        } else {
          // Every hadith equally likely, not every book.
          let i = Math.floor(Math.random() * books.reduce((n, x) => n + x.hadiths.length, 0));
          b = books.find((x) => (i < x.hadiths.length ? true : ((i -= x.hadiths.length), false)))!;
          h = b.hadiths[i];
        }
        return {
          reference: hadithRef(collection, b, h),
          collection: collection.collection,
          book: b.book,
          book_title: b.title,
          number: h.n,
          narrator: h.narrator,
          text: h.text,
          source,
        };
      },
    }),

    reflection: read({
      description:
        "Today's reflection (UTC day): a Quran verse with its surah, a saying of the Prophet and one of the names of Allah — the same for everyone all day. While the public source of the saying or the name cannot be reached that part is null and `unavailable` says why. Each day's is kept in the archive.",
      args: T.Object({}),
      access: "public",
      openWorld: true,
      async run(_args, ctx) {
        const day = ctx.clock.now().toISOString().slice(0, 10);
        const r = await reflectionFor(day, ctx);
        if (archived.get(ctx.config) !== day) {
          await ctx.index.put({
            kind: "prayer",
            ref: `reflection:${day}`,
            owner: null,
            title: `Reflection for ${day}: ${r.verse.reference}${r.name ? `; ${r.name.transliteration}` : ""}`,
            body: [
              `${r.verse.reference} — ${r.verse.translation}`,
              r.saying && `${r.saying.reference} — ${r.saying.narrator ? `${r.saying.narrator}: ` : ""}${r.saying.text}`,
              r.name && `${r.name.transliteration} (${r.name.arabic}), ${r.name.meaning}: ${r.name.description}`,
            ]
              .filter(Boolean)
              .join("\n\n"),
          });
          // A reflection missing a part its source could not give yet is archived again once it is whole.
          if (!r.unavailable) archived.set(ctx.config, day);
        }
        return r;
      },
    }),

    search: read({
      description:
        "Searches the Quran (English translation), the hadith of Sahih al-Bukhari and the names of Allah for a plain-language question; passages sharing the most of its words rank first. `searched` names the collections searched; `unavailable` says which were not (their public source could not be reached yet) and why.",
      args: T.Object({ query: T.String({ minLength: 1, maxLength: 500, description: "A plain-language question or a few words." }) }),
      access: "public",
      openWorld: true,
      async run({ query }, ctx) {
        const found = await searchTexts(query, ctx, { quran: 5, hadith: 5, name: 3 });
        return {
          query,
          // No embedding model is reachable from here, so passages are matched by their words (stemmed), not by meaning.
          matched_by: "words",
          ...found,
        };
      },
    }),
  },
});
