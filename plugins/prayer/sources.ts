// The public texts a default instance serves without any setting: Sahih
// al-Bukhari in English and the names of Allah, each fetched once from a
// keyless public source on first need and kept in the database (prayer_texts),
// so later calls and restarts work offline. A file in PRAYER_DATA replaces
// either (texts.ts); PRAYER_HADITH_URL and PRAYER_NAMES_URL replace the sources.
//
//  - Hadith: the hadith-api collection (github.com/fawazahmed0/hadith-api),
//    served by jsDelivr: /editions/eng-bukhari.min.json, or .json when the
//    minified copy fails, as that project asks its users to do:
//      {"metadata": {"name", "sections": {"1": "Revelation", ...}},
//       "hadiths": [{"hadithnumber", "text": "Narrated ...: ...", "reference": {"book", "hadith"}}]}
//  - Names: names/data/names.json in github.com/asim/reminder at a fixed
//    commit, served by jsDelivr, in the shape of Aladhan's asmaAlHusna API:
//      {"code", "status", "data": [{"number", "name", "transliteration", "found", "en": {"meaning", "desc"}}]}
import { eq } from "drizzle-orm";
import { HearthError, upstream, defineProvider } from "hearth";
import { prayerTexts } from "./schema.ts";
import type { Book, Hadith, HadithCollection, Name, TextsCtx } from "./texts.ts";

export const HADITH_PROVIDER = defineProvider({
  name: "PRAYER_HADITH",
  label: "hadith-api (fawazahmed0, via jsDelivr)",
  url: "https://cdn.jsdelivr.net/gh/fawazahmed0/hadith-api@1",
  // One whole collection (about 5 MB) at a time.
  concurrency: 1,
  timeoutMs: 60_000,
  maxBytes: 20_000_000,
});

export const NAMES_PROVIDER = defineProvider({
  name: "PRAYER_NAMES",
  label: "the names of Allah from asim/reminder (via jsDelivr)",
  url: "https://cdn.jsdelivr.net/gh/asim/reminder@086425d562c19bef59c2644d1f634a1d987622ea",
  concurrency: 1,
  timeoutMs: 30_000,
  maxBytes: 2_000_000,
});

const HADITH_PATHS = ["/editions/eng-bukhari.min.json", "/editions/eng-bukhari.json"];
const NAMES_PATH = "/names/data/names.json";

export const PUBLIC_HADITH_SOURCE = "Sahih al-Bukhari in English, from the hadith-api collection (github.com/fawazahmed0/hadith-api), kept on this instance";
export const PUBLIC_NAMES_SOURCE = "The names of Allah, from github.com/asim/reminder (names/data/names.json), kept on this instance";

type TextName = "hadith" | "names";

const refused = (label: string, what: string) => upstream("upstream_failed", `${label} sent ${what}`);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 1;

// "Narrated Ibn 'Umar: Allah's Messenger (ﷺ) said: ..." -> narrator and text, as PRAYER_DATA files have them.
const NARRATED = /^(Narrated [^:"]{1,200}):\s*/;

/** Sahih al-Bukhari as hadith-api gives it, in the PRAYER_DATA file's shape; hadiths without text or a place in a book are left out. */
export function hadithFromApi(body: unknown, label = HADITH_PROVIDER.label): HadithCollection {
  if (!isObject(body) || !isObject(body.metadata) || !Array.isArray(body.hadiths)) throw refused(label, 'an edition without "metadata" and "hadiths"');
  const meta = body.metadata;
  const name = typeof meta.name === "string" && meta.name.trim() ? meta.name.trim() : "Sahih al-Bukhari";
  const sections = isObject(meta.sections) ? meta.sections : {};
  const books = new Map<number, Book>();
  for (const h of body.hadiths as unknown[]) {
    if (!isObject(h) || typeof h.text !== "string" || !isObject(h.reference)) continue;
    const { book, hadith: n } = h.reference;
    const whole = h.text.trim();
    if (!isCount(book) || !isCount(n) || !whole) continue;
    const m = NARRATED.exec(whole);
    const entry: Hadith = m && whole.length > m[0].length ? { n, narrator: m[1], text: whole.slice(m[0].length) } : { n, narrator: "", text: whole };
    let b = books.get(book);
    if (!b) {
      const title = sections[String(book)];
      books.set(book, (b = { book, title: typeof title === "string" && title.trim() ? title.trim() : `Book ${book}`, hadiths: [] }));
    }
    // A number given twice keeps its first text, so a reference names one hadith.
    if (!b.hadiths.some((x) => x.n === n)) b.hadiths.push(entry);
  }
  if (books.size === 0) throw refused(label, "an edition with no hadith in it");
  return { collection: name, books: [...books.values()].sort((a, b) => a.book - b.book) };
}

/** The names of Allah as the asmaAlHusna shape gives them, in the PRAYER_DATA file's shape. */
export function namesFromApi(body: unknown, label = NAMES_PROVIDER.label): Name[] {
  if (!isObject(body) || !Array.isArray(body.data)) throw refused(label, 'a list without "data"');
  const out: Name[] = [];
  for (const x of body.data as unknown[]) {
    if (!isObject(x) || !isCount(x.number) || typeof x.transliteration !== "string" || !x.transliteration.trim() || !isObject(x.en)) continue;
    const meaning = typeof x.en.meaning === "string" ? x.en.meaning.trim() : "";
    if (!meaning || out.some((n) => n.number === x.number)) continue;
    // Some descriptions carry their quotes escaped twice (\"); they are read as quotes.
    const description = typeof x.en.desc === "string" ? x.en.desc.replace(/\\"/g, '"').trim() : "";
    out.push({
      number: x.number,
      arabic: typeof x.name === "string" ? x.name.trim() : "",
      transliteration: x.transliteration.trim(),
      meaning,
      description,
      ...(typeof x.found === "string" && x.found.trim() ? { found: x.found.trim() } : {}),
    });
  }
  if (out.length === 0) throw refused(label, "a list with no name in it");
  return out.sort((a, b) => a.number - b.number);
}

interface Got<T> {
  url: string;
  data: T;
}

async function fetchJson(ctx: TextsCtx, provider: string, label: string, path: string): Promise<Got<unknown>> {
  const r = await ctx.bytes.get(provider, path);
  try {
    return { url: r.url, data: JSON.parse(new TextDecoder().decode(r.bytes)) };
  } catch {
    throw refused(label, "an answer that is not JSON");
  }
}

async function fetchHadith(ctx: TextsCtx): Promise<Got<HadithCollection>> {
  let last: unknown;
  for (const path of HADITH_PATHS) {
    try {
      const got = await fetchJson(ctx, HADITH_PROVIDER.name, HADITH_PROVIDER.label, path);
      return { url: got.url, data: hadithFromApi(got.data) };
    } catch (e) {
      // Only a copy refused (missing, garbled) sends us to the other; an unreachable source is unreachable for both.
      if (!(e instanceof HearthError) || e.kind !== "upstream_failed") throw e;
      last = e;
    }
  }
  throw last;
}

async function fetchNames(ctx: TextsCtx): Promise<Got<Name[]>> {
  const got = await fetchJson(ctx, NAMES_PROVIDER.name, NAMES_PROVIDER.label, NAMES_PATH);
  return { url: got.url, data: namesFromApi(got.data) };
}

// Per running instance (its config object): the text held in memory, or the
// read or fetch under way, which callers at the same moment share.
const held = new WeakMap<object, Map<TextName, Promise<unknown>>>();

function kept<T>(ctx: TextsCtx, name: TextName, fetch: () => Promise<Got<T>>): Promise<T> {
  let m = held.get(ctx.config);
  if (!m) held.set(ctx.config, (m = new Map()));
  const memo = m;
  const hit = memo.get(name);
  if (hit) return hit as Promise<T>;
  const job = (async () => {
    const row = await ctx.db.select({ body: prayerTexts.body }).from(prayerTexts).where(eq(prayerTexts.name, name)).get();
    if (row)
      try {
        return JSON.parse(row.body) as T;
      } catch {
        // A copy damaged in the database is fetched again and replaced.
        ctx.log.warn("prayer text kept in the database is not JSON; fetching it again", { text: name });
      }
    const { url, data } = await fetch();
    const fetched = ctx.clock.now().getTime();
    const body = JSON.stringify(data);
    await ctx.writes((db) =>
      db.insert(prayerTexts).values({ name, url, fetched, body }).onConflictDoUpdate({ target: prayerTexts.name, set: { url, fetched, body } }).run(),
    );
    ctx.log.info("prayer text fetched and kept", { text: name, from: url });
    return data;
  })();
  memo.set(name, job);
  // A failure is not remembered: the next call asks again.
  job.catch(() => {
    if (memo.get(name) === job) memo.delete(name);
  });
  return job;
}

/** Sahih al-Bukhari from the public source: the copy kept in the database, else fetched now and kept. */
export function publicHadith(ctx: TextsCtx): Promise<HadithCollection> {
  return kept(ctx, "hadith", () => fetchHadith(ctx)).catch((e) => {
    throw failed(e, "Sahih al-Bukhari is", "it");
  });
}

/** The names of Allah from the public source: the copy kept in the database, else fetched now and kept. */
export function publicNames(ctx: TextsCtx): Promise<Name[]> {
  return kept(ctx, "names", () => fetchNames(ctx)).catch((e) => {
    throw failed(e, "The names of Allah are", "them");
  });
}

/** A fetch that failed, said as what could not be had and why; still an upstream_* error the caller may retry. */
function failed(e: unknown, whatIs: string, it: string): unknown {
  if (!(e instanceof HearthError) || !e.kind.startsWith("upstream_")) return e;
  return new HearthError(e.kind, `${whatIs} fetched once from a public source and kept, and this instance does not hold ${it} yet: ${e.message}`, {
    retry: true,
    headers: e.headers,
  });
}
