// prayer: times checked against timetables the authorities published, the
// qibla against known bearings, the Quran, the hadith and names read from a
// PRAYER_DATA folder (synthetic fixture entries) or fetched once from their
// public sources (a loopback server replaying excerpts of the real payloads)
// and kept, the daily reflection and its archive entry, and every argument
// rule — all offline, through HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHearth, TestClock } from "../harness.ts";
import { json, recorded, startFixture } from "../upstream/fixture-server.ts";

const DATA = join(import.meta.dir, "..", "fixtures", "prayer-data");
const fixture = JSON.parse(readFileSync(join(DATA, "bukhari.json"), "utf8")) as {
  collection: string;
  books: { book: number; title: string; hadiths: { n: number; narrator: string; text: string }[] }[];
};
const fixtureNames = JSON.parse(readFileSync(join(DATA, "names.json"), "utf8")) as { number: number; transliteration: string }[];

// The public sources as they serve them: hadith-api's edition of Sahih
// al-Bukhari (minified and not) and the names of Allah, under their base paths.
const HADITH_MIN = "/gh/fawazahmed0/hadith-api@1/editions/eng-bukhari.min.json";
const HADITH_FULL = "/gh/fawazahmed0/hadith-api@1/editions/eng-bukhari.json";
const NAMES_PATH = "/gh/asim/reminder@086425d/names/data/names.json";
const minMissing = { on: false };
const sources = startFixture({
  [HADITH_MIN]: () => (minMissing.on ? new Response("Couldn't find the requested file", { status: 404 }) : json(recorded("hadith-api", "eng-bukhari.min.json"))),
  [HADITH_FULL]: () => json(recorded("hadith-api", "eng-bukhari.json")),
  [NAMES_PATH]: () => json(recorded("asim-reminder", "names.json")),
});
const sourceEnv = {
  PRAYER_HADITH_URL: `${sources.url}/gh/fawazahmed0/hadith-api@1`,
  PRAYER_NAMES_URL: `${sources.url}/gh/asim/reminder@086425d`,
  UPSTREAM_RETRY_MS: "1",
};
const edition = JSON.parse(recorded("hadith-api", "eng-bukhari.json")) as {
  metadata: { name: string; sections: Record<string, string> };
  hadiths: { hadithnumber: number; text: string; reference: { book: number; hadith: number } }[];
};
const publicNames = (JSON.parse(recorded("asim-reminder", "names.json")) as { data: { number: number; transliteration: string; en: { meaning: string; desc: string } }[] }).data;
/** The hadith the source gave for a book and number, as its whole text ("Narrated ...: ..."). */
const sourceText = (book: number, n: number) => edition.hadiths.find((x) => x.reference.book === book && x.reference.hadith === n)?.text;
const upstreamHits = () => sources.hits(HADITH_MIN) + sources.hits(HADITH_FULL) + sources.hits(NAMES_PATH);

let h: Awaited<ReturnType<typeof startHearth>>;
const clock = new TestClock();
beforeAll(async () => {
  h = await startHearth({ clock, env: { PRAYER_DATA: DATA, ...sourceEnv } });
});
afterAll(() => {
  h.stop();
  sources.stop();
});

const minutes = (hhmm: string) => {
  const [hh, mm] = hhmm.split(":").map(Number);
  return hh * 60 + mm;
};
/** Published tables round to the minute and authorities add precautions; they state a 2-minute variance. */
function near(got: Record<string, string>, published: Record<string, string>) {
  for (const [prayer, want] of Object.entries(published)) {
    const diff = Math.abs(minutes(got[prayer]) - minutes(want));
    if (diff > 2) throw new Error(`${prayer}: got ${got[prayer]}, published ${want}`);
  }
}

describe("times", () => {
  test("Singapore, 1 January 2020, MUIS: matches the timetable MUIS published", async () => {
    clock.set("2020-01-01T01:00:00Z"); // 09:00 in Singapore
    const r = await h.call("prayer/times", { lat: 1.370844612058886, lon: 103.80145644060552, tz: "Asia/Singapore", method: "muis" });
    expect(r.status).toBe(200);
    const t = r.body.result;
    expect(t.date).toBe("2020-01-01");
    expect(t.method).toMatchObject({ name: "muis", fajr_angle: 20, isha_angle: 18 });
    near(t.times, { fajr: "05:44", sunrise: "07:07", dhuhr: "13:10", asr: "16:34", maghrib: "19:10", isha: "20:25" });
    expect(t.next).toMatchObject({ prayer: "dhuhr", tomorrow: false });
    expect(t.next.in_minutes).toBe(Math.ceil((Date.parse(t.next.at) - clock.now().getTime()) / 60000));
  });

  test("Ankara, winter and summer 2019, Diyanet: matches the published timetable", async () => {
    const place = { lat: 39.939382, lon: 32.819713, tz: "Europe/Istanbul", method: "diyanet" };
    clock.set("2019-01-01T09:00:00Z");
    let r = await h.call("prayer/times", place);
    expect(r.body.result.date).toBe("2019-01-01");
    near(r.body.result.times, { fajr: "06:33", sunrise: "08:03", dhuhr: "12:57", asr: "15:20", maghrib: "17:40", isha: "19:05" });
    clock.set("2019-07-01T09:00:00Z");
    r = await h.call("prayer/times", place);
    near(r.body.result.times, { fajr: "03:21", sunrise: "05:16", dhuhr: "12:57", asr: "16:55", maghrib: "20:28", isha: "22:15" });
  });

  test("defaults are ISNA and UTC; the convention moves only Fajr and Isha", async () => {
    clock.set("2026-03-01T12:00:00Z");
    const at = { lat: 51.5074, lon: -0.1278 };
    const isna = (await h.call("prayer/times", at)).body.result;
    expect(isna.tz).toBe("UTC");
    expect(isna.method).toMatchObject({ name: "isna", fajr_angle: 15, isha_angle: 15 });
    const egypt = (await h.call("prayer/times", { ...at, method: "egypt" })).body.result;
    // A deeper twilight angle means an earlier Fajr and a later Isha.
    expect(minutes(egypt.times.fajr)).toBeLessThan(minutes(isna.times.fajr));
    expect(minutes(egypt.times.isha)).toBeGreaterThan(minutes(isna.times.isha));
    expect(egypt.times.maghrib).toBe(isna.times.maghrib);
    const gulf = (await h.call("prayer/times", { ...at, method: "gulf" })).body.result;
    expect(gulf.method).toMatchObject({ fajr_angle: 19.5, isha_minutes_after_maghrib: 90 });
    expect(minutes(gulf.times.isha) - minutes(gulf.times.maghrib)).toBe(90);
  });

  test("every convention answers", async () => {
    for (const method of ["isna", "mwl", "egypt", "karachi", "gulf", "diyanet", "muis", "jakim"]) {
      const r = await h.call("prayer/times", { lat: 3.139, lon: 101.6869, tz: "Asia/Kuala_Lumpur", method });
      expect(r.status).toBe(200);
      expect(r.body.result.method.name).toBe(method);
      for (const p of ["fajr", "sunrise", "dhuhr", "asr", "maghrib", "isha"]) expect(r.body.result.times[p]).toMatch(/^\d\d:\d\d$/);
    }
  });

  test("after Isha the next prayer is tomorrow's Fajr", async () => {
    clock.set("2020-01-01T15:00:00Z"); // 23:00 in Singapore
    const r = await h.call("prayer/times", { lat: 1.3708, lon: 103.8015, tz: "Asia/Singapore", method: "muis" });
    expect(r.body.result.next).toMatchObject({ prayer: "fajr", tomorrow: true });
    expect(r.body.result.next.at.startsWith("2020-01-01T21:4")).toBe(true); // 05:4x on 2 January, local
  });

  test("the date is the one in the asked zone, not the server's", async () => {
    clock.set("2020-01-01T20:00:00Z"); // already 2 January in Singapore
    const r = await h.call("prayer/times", { lat: 1.3708, lon: 103.8015, tz: "Asia/Singapore" });
    expect(r.body.result.date).toBe("2020-01-02");
  });

  test("under the midnight sun the times are borrowed, and said to be; at the pole they are missing, and said to be", async () => {
    clock.set("2026-06-21T12:00:00Z");
    const svalbard = (await h.call("prayer/times", { lat: 78.22, lon: 15.65, tz: "Arctic/Longyearbyen" })).body.result;
    expect(svalbard.note).toContain("borrowed from the nearest day");
    for (const p of ["fajr", "sunrise", "dhuhr", "asr", "maghrib", "isha"]) expect(svalbard.times[p]).toMatch(/^\d\d:\d\d$/);
    const pole = await h.call("prayer/times", { lat: 89.9, lon: 0 });
    expect(pole.status).toBe(200);
    expect(pole.body.result.times).toMatchObject({ fajr: null, sunrise: null, maghrib: null, isha: null });
    expect(pole.body.result.times.dhuhr).toMatch(/^\d\d:\d\d$/);
    expect(pole.body.result.note).toContain("cannot be calculated");
    const london = (await h.call("prayer/times", { lat: 51.5, lon: 0 })).body.result;
    expect(london.note).toBeUndefined();
  });

  test("argument rules", async () => {
    const bad = [
      [{ lat: 10, lon: 10, tz: "Mars/Olympus" }, "tz"],
      [{ lat: 10, lon: 10, method: "ummalqura" }, "method"],
      [{ lat: 91, lon: 10 }, "lat"],
      [{ lat: 10, lon: -181 }, "lon"],
      [{ lat: 10 }, "lon"],
      [{ lat: "north", lon: 10 }, "lat"],
      [{ lat: 10, lon: 10, when: "today" }, "when"],
    ] as const;
    for (const [args, field] of bad) {
      const r = await h.call("prayer/times", args as Record<string, unknown>);
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe(field);
    }
  });
});

describe("qibla", () => {
  test("bearings from true north for known cities", async () => {
    const known: [number, number, number][] = [
      [40.7128, -74.0059, 58.4817], // New York
      [51.5074, -0.1278, 118.987], // London
      [-33.8688, 151.2093, 277.4996], // Sydney
      [35.6895, 139.6917, 293.021], // Tokyo
    ];
    for (const [lat, lon, bearing] of known) {
      const r = await h.call("prayer/qibla", { lat, lon });
      expect(r.status).toBe(200);
      expect(Math.abs(r.body.result.bearing - bearing)).toBeLessThan(0.05);
    }
    const london = (await h.call("prayer/qibla", { lat: 51.5074, lon: -0.1278 })).body.result;
    expect(london.compass).toBe("ESE");
    expect(london.distance_km).toBeGreaterThan(4700);
    expect(london.distance_km).toBeLessThan(4900);
  });

  test("argument rules", async () => {
    expect((await h.call("prayer/qibla", { lat: -91, lon: 0 })).body.error.field).toBe("lat");
    expect((await h.call("prayer/qibla", { lat: 0 })).body.error.field).toBe("lon");
  });
});

describe("verse", () => {
  test("one verse, with its surah, Arabic and translation", async () => {
    const r = await h.call("prayer/verse", { chapter: 2, verse: 255 });
    expect(r.status).toBe(200);
    const v = r.body.result;
    expect(v.reference).toBe("Al-Baqarah 2:255");
    expect(v.surah).toMatchObject({ number: 2, transliteration: "Al-Baqarah", verses: 286 });
    expect(v.verse.translation).toStartWith("Allah - there is no deity except Him, the Ever-Living");
    const { loadQuran } = await import("../../plugins/prayer/texts.ts");
    expect(v.verse.text).toBe((await loadQuran())[1].verses[254].text);
    expect(v.verse.text).toMatch(/^[\u0600-\u06FF\u0750-\u077F\s]+$/);
  });

  test("a whole chapter", async () => {
    const r = await h.call("prayer/verse", { chapter: 112 });
    expect(r.body.result.surah).toMatchObject({ number: 112, transliteration: "Al-Ikhlas", verses: 4 });
    expect(r.body.result.verses.map((v: { number: number }) => v.number)).toEqual([1, 2, 3, 4]);
    expect(r.body.result.verses[0].translation).toContain("He is Allah, [who is] One");
  });

  test("chapter 1-114 and a verse within the chapter's range", async () => {
    for (const [args, field, msg] of [
      [{ chapter: 0 }, "chapter", /at least 1/],
      [{ chapter: 115 }, "chapter", /at most 114/],
      [{ chapter: 1.5 }, "chapter", /whole number/],
      [{ chapter: 1, verse: 8 }, "verse", /has 7 verses/],
      [{ chapter: 2, verse: 0 }, "verse", /at least 1/],
      [{}, "chapter", /required/],
    ] as const) {
      const r = await h.call("prayer/verse", args as Record<string, unknown>);
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe(field);
      expect(r.body.error.message).toMatch(msg);
    }
    expect((await h.call("prayer/verse", { chapter: 2, verse: 286 })).status).toBe(200);
  });
});

describe("saying", () => {
  test("from the given book, and the text is the data file's", async () => {
    const book2 = fixture.books.find((b) => b.book === 2)!;
    for (let i = 0; i < 5; i++) {
      const r = await h.call("prayer/saying", { book: 2 });
      expect(r.status).toBe(200);
      const s = r.body.result;
      expect(s).toMatchObject({ collection: "Test collection", book: 2, book_title: "Test book of prayer" });
      const hadith = book2.hadiths.find((x) => x.n === s.number)!;
      expect(s.text).toBe(hadith.text);
      expect(s.narrator).toBe(hadith.narrator);
      expect(s.reference).toBe(`Test collection, book 2 (Test book of prayer), hadith ${s.number}`);
      expect(s.source).toContain("PRAYER_DATA/bukhari.json");
    }
    const any = (await h.call("prayer/saying")).body.result;
    const book = fixture.books.find((b) => b.book === any.book)!;
    expect(book.hadiths.some((x) => x.n === any.number && x.text === any.text)).toBe(true);
  });

  test("the owner's PRAYER_DATA files are used in place of the public sources, which are not asked", async () => {
    const before = upstreamHits();
    expect((await h.call("prayer/saying")).body.result.source).toContain("PRAYER_DATA/bukhari.json");
    // The day the reflection tests below read, so its archive entry is theirs.
    clock.set("2026-11-21T00:01:00Z");
    const a = (await h.call("prayer/reflection")).body.result;
    expect(a.sources.hadith).toContain("PRAYER_DATA/bukhari.json");
    expect(a.sources.names).toContain("PRAYER_DATA/names.json");
    expect((await h.call("prayer/search", { query: "patience" })).body.result.searched).toContain("Test collection");
    expect(upstreamHits()).toBe(before);
    expect(await h.rows("SELECT name FROM prayer_texts")).toEqual([]);
  });

  test("book must be 1-97, and one the data holds", async () => {
    for (const book of [0, 98, 2.5]) {
      const r = await h.call("prayer/saying", { book });
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe("book");
    }
    const missing = await h.call("prayer/saying", { book: 30 });
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain("no book 30 (it has books 1, 2, 5)");
  });
});

describe("reflection", () => {
  const archived = () => h.rows<{ ref: string; title: string; body: string }>("SELECT ref, title, body FROM search_index WHERE service = 'prayer' AND kind = 'prayer' ORDER BY ref");

  test("the same all day for everyone, another the next day, each archived once", async () => {
    clock.set("2026-11-21T00:05:00Z");
    const a = (await h.call("prayer/reflection")).body.result;
    clock.set("2026-11-21T23:55:00Z");
    const token = await h.token("reader");
    const b = (await h.call("prayer/reflection", {}, { token })).body.result;
    expect(b).toEqual(a);
    expect(a.date).toBe("2026-11-21");
    expect(a.verse.reference).toBe(`${a.verse.surah.transliteration} ${a.verse.surah.number}:${a.verse.verse}`);
    const book = fixture.books.find((x) => x.book === a.saying.book)!;
    expect(book.hadiths.find((x) => x.n === a.saying.number)!.text).toBe(a.saying.text);
    // Only sayings that quote someone are read out; the fixture's one narration is never chosen.
    expect(a.saying.text).toMatch(/\bsaid\b/);
    expect(fixtureNames.map((n) => n.number)).toContain(a.name.number);
    expect(a.unavailable).toBeUndefined();
    expect(Object.keys(a.sources)).toEqual(["quran", "hadith", "names"]);

    let rows = await archived();
    expect(rows.map((r) => r.ref)).toEqual(["reflection:2026-11-21"]);
    expect(rows[0].body).toContain(a.verse.translation);
    expect(rows[0].body).toContain(a.saying.text);
    expect(rows[0].body).toContain(a.name.transliteration);

    clock.set("2026-11-22T08:00:00Z");
    const c = (await h.call("prayer/reflection")).body.result;
    expect(c.date).toBe("2026-11-22");
    expect([c.verse.reference, c.saying.reference, c.name.number]).not.toEqual([a.verse.reference, a.saying.reference, a.name.number]);
    rows = await archived();
    expect(rows.map((r) => r.ref)).toEqual(["reflection:2026-11-21", "reflection:2026-11-22"]);
  });

  test("takes no arguments", async () => {
    const r = await h.call("prayer/reflection", { day: "monday" });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("day");
  });
});

describe("search", () => {
  test("finds verses, hadith and names by the question's words", async () => {
    const r = await h.call("prayer/search", { query: "What does the Quran say about hardship and ease?" });
    expect(r.status).toBe(200);
    const refs = r.body.result.verses.map((v: { reference: string }) => v.reference);
    expect(refs.some((x: string) => x === "Ash-Sharh 94:5" || x === "Ash-Sharh 94:6")).toBe(true);
    for (const v of r.body.result.verses) expect(v.translation.toLowerCase()).toMatch(/hardship|ease/);

    expect(r.body.result.searched).toEqual(["the Quran (Saheeh International translation)", "Test collection", "the names of Allah"]);
    expect(r.body.result.unavailable).toBeUndefined();

    const p = (await h.call("prayer/search", { query: "patience at the first stroke of a calamity" })).body.result;
    expect(p.hadith[0].reference).toBe("Test collection, book 1 (Test book of patience), hadith 2");
    expect(p.hadith[0].text).toContain("Patience at the start of a calamity");
    // Only passages with an asked word (or a related one) in their text or their book's title are found.
    for (const x of p.hadith) expect(`${x.reference} ${x.text}`).toMatch(/patien|calamit/i);
    expect(p.hadith).toHaveLength(3);
    expect(p.names.map((x: { transliteration: string }) => x.transliteration)).toEqual(["Test Name Two"]);

    const n = (await h.call("prayer/search", { query: "the most merciful" })).body.result;
    expect(n.names.map((x: { transliteration: string }) => x.transliteration)).toEqual(["Test Name One"]);
  });

  test("everyday words also find the words the translations use", async () => {
    const r = (await h.call("prayer/search", { query: "fasting" })).body.result;
    expect(r.verses.some((v: { translation: string }) => /ramadhan|fast/i.test(v.translation))).toBe(true);
    // "patience" and "patient" stem apart; only the related words find a verse that never says "patience".
    const p = (await h.call("prayer/search", { query: "patience" })).body.result;
    expect(p.verses.some((v: { translation: string }) => /patient|persevere/i.test(v.translation) && !/patience/i.test(v.translation))).toBe(true);
  });

  test("a question of only common words finds nothing rather than everything", async () => {
    const r = await h.call("prayer/search", { query: "what is the" });
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({ verses: [], hadith: [], names: [] });
  });

  test("query is required and bounded", async () => {
    expect((await h.call("prayer/search", {})).body.error.field).toBe("query");
    expect((await h.call("prayer/search", { query: "" })).body.error.field).toBe("query");
    expect((await h.call("prayer/search", { query: "x".repeat(501) })).body.error.field).toBe("query");
  });
});

describe("without PRAYER_DATA: the public sources, fetched once and kept", () => {
  let dataDir: string;
  let bare: Awaited<ReturnType<typeof startHearth>>;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "prayer-public-"));
    bare = await startHearth({ clock, dataDir, env: sourceEnv });
  });
  afterAll(() => {
    bare.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("saying answers from Sahih al-Bukhari as the source gave it, fetched on first need", async () => {
    const before = sources.hits(HADITH_MIN);
    for (let i = 0; i < 5; i++) {
      const r = await bare.call("prayer/saying", { book: 2 });
      expect(r.status).toBe(200);
      const s = r.body.result;
      expect(s).toMatchObject({ collection: edition.metadata.name, book: 2, book_title: edition.metadata.sections["2"] });
      // The source's "Narrated X: text" is split into the narrator and the text, and nothing else changes.
      expect(`${s.narrator}: ${s.text}`).toBe(sourceText(2, s.number)!);
      expect(s.narrator).toStartWith("Narrated ");
      expect(s.reference).toBe(`${edition.metadata.name}, book 2 (Belief), hadith ${s.number}`);
      expect(s.source).toContain("hadith-api");
    }
    const any = (await bare.call("prayer/saying")).body.result;
    expect(`${any.narrator}: ${any.text}`).toBe(sourceText(any.book, any.number)!);
    // One request for the whole collection, however many sayings were asked for.
    expect(sources.hits(HADITH_MIN) - before).toBe(1);
    const kept = (await bare.row<{ name: string; url: string }>("SELECT name, url FROM prayer_texts WHERE name = 'hadith'"))!;
    expect(kept.url).toBe(`${sources.url}${HADITH_MIN}`);
  });

  test("a book the collection lacks is 404 naming those it has; a book out of range is 400", async () => {
    const missing = await bare.call("prayer/saying", { book: 30 });
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain("no book 30 (it has books 1, 2)");
    expect((await bare.call("prayer/saying", { book: 98 })).body.error.field).toBe("book");
  });

  test("the reflection carries a saying and a name from the sources, and its archive entry holds all three", async () => {
    clock.set("2026-11-21T09:00:00Z");
    const r = await bare.call("prayer/reflection");
    expect(r.status).toBe(200);
    const a = r.body.result;
    // The verse is the one an instance with PRAYER_DATA gives the same day: it depends on the date alone.
    expect(a.verse).toEqual((await h.call("prayer/reflection")).body.result.verse);
    expect(`${a.saying.narrator}: ${a.saying.text}`).toBe(sourceText(a.saying.book, a.saying.number)!);
    expect(a.saying.text).toMatch(/\bsaid\b|\bsaying\b/);
    const name = publicNames.find((n) => n.number === a.name.number)!;
    expect(a.name).toMatchObject({ transliteration: name.transliteration, meaning: name.en.meaning });
    expect(a.unavailable).toBeUndefined();
    expect(Object.keys(a.sources)).toEqual(["quran", "hadith", "names"]);
    expect(a.sources.names).toContain("asim/reminder");
    const row = (await bare.row<{ body: string }>("SELECT body FROM search_index WHERE service = 'prayer' AND ref = 'reflection:2026-11-21'"))!;
    expect(row.body).toContain(a.saying.text);
    expect(row.body).toContain(a.name.transliteration);
  });

  test("search covers the hadith and the names too", async () => {
    const r = (await bare.call("prayer/search", { query: "harming with the tongue and hands" })).body.result;
    expect(r.searched).toEqual(["the Quran (Saheeh International translation)", edition.metadata.name, "the names of Allah"]);
    expect(r.unavailable).toBeUndefined();
    expect(r.hadith.map((x: { reference: string }) => x.reference)).toContain(`${edition.metadata.name}, book 2 (Belief), hadith 3`);
    const n = (await bare.call("prayer/search", { query: "mysterious meaning" })).body.result;
    expect(n.names.map((x: { transliteration: string }) => x.transliteration)).toEqual(["Al Mu'min"]);
    // The source escapes some quotes twice; they are read as quotes.
    expect(n.names[0].description).toContain('because "Al-Mu\'min" comes from');
    expect(n.names[0].found).toBe("(59:23)");
  });

  test("the texts are kept: later calls, and a restart with the sources down, ask nothing", async () => {
    const before = upstreamHits();
    expect((await bare.call("prayer/saying")).status).toBe(200);
    expect((await bare.call("prayer/search", { query: "faith" })).status).toBe(200);
    expect(upstreamHits()).toBe(before);
    await bare.stop();
    sources.fail = "503";
    try {
      bare = await startHearth({ clock, dataDir, env: sourceEnv });
      const r = await bare.call("prayer/saying", { book: 1 });
      expect(r.status).toBe(200);
      expect(`${r.body.result.narrator}: ${r.body.result.text}`).toBe(sourceText(1, r.body.result.number)!);
      clock.set("2026-11-22T09:00:00Z");
      const a = (await bare.call("prayer/reflection")).body.result;
      expect(a.unavailable).toBeUndefined();
      expect(a.name.number).toBeGreaterThan(0);
      expect(upstreamHits()).toBe(before);
    } finally {
      sources.fail = null;
    }
  });
  test("a kept copy damaged in the database is fetched again and replaced, not answered with a 500", async () => {
    expect((await bare.call("prayer/search", { query: "mercy" })).body.result.names.length).toBeGreaterThan(0);
    await bare.exec("UPDATE prayer_texts SET body = ? WHERE name = 'names'", '[{"number": 1,');
    expect((await bare.row<{ body: string }>("SELECT body FROM prayer_texts WHERE name = 'names'"))!.body).toBe('[{"number": 1,');
    await bare.stop();
    bare = await startHearth({ clock, dataDir, env: sourceEnv });
    const names = sources.hits(NAMES_PATH);
    const r = await bare.call("prayer/search", { query: "mysterious meaning" });
    expect(r.status).toBe(200);
    expect(r.body.result.names.map((x: { transliteration: string }) => x.transliteration)).toEqual(["Al Mu'min"]);
    expect(sources.hits(NAMES_PATH) - names).toBe(1);
    const kept = (await bare.row<{ body: string }>("SELECT body FROM prayer_texts WHERE name = 'names'"))!;
    expect(JSON.parse(kept.body)).toHaveLength(publicNames.length);
  });
});

describe("the public sources failing", () => {
  let inst: Awaited<ReturnType<typeof startHearth>>;
  beforeAll(async () => {
    inst = await startHearth({ clock, env: sourceEnv });
  });
  afterAll(() => {
    sources.fail = null;
    minMissing.on = false;
    inst.stop();
  });

  test("down: saying is a 503 the caller may retry, the reflection and search say what is missing, and nothing is kept", async () => {
    sources.fail = "503";
    const r = await inst.call("prayer/saying");
    expect(r.status).toBe(503);
    expect(r.body.error).toMatchObject({ kind: "upstream_unavailable", retry: true });
    expect(r.body.error.message).toContain("Sahih al-Bukhari is fetched once from a public source and kept");
    expect(r.body.error.stack).toBeUndefined();

    clock.set("2026-11-23T09:00:00Z");
    const a = (await inst.call("prayer/reflection")).body.result;
    expect(a.verse.translation.length).toBeGreaterThan(0);
    expect(a.saying).toBeNull();
    expect(a.name).toBeNull();
    expect(a.unavailable.saying).toContain("Ask again later.");
    expect(a.unavailable.name).toContain("The names of Allah are fetched once");
    expect(Object.keys(a.sources)).toEqual(["quran"]);
    const s = (await inst.call("prayer/search", { query: "patience" })).body.result;
    expect(s.searched).toEqual(["the Quran (Saheeh International translation)"]);
    expect(Object.keys(s.unavailable)).toEqual(["hadith", "names"]);
    expect(await inst.rows("SELECT name FROM prayer_texts")).toEqual([]);

    // Back up: the next calls fetch, and the day's archive entry is made whole.
    sources.fail = null;
    const b = (await inst.call("prayer/reflection")).body.result;
    expect(b.verse).toEqual(a.verse);
    expect(b.unavailable).toBeUndefined();
    const row = (await inst.row<{ body: string }>("SELECT body FROM search_index WHERE service = 'prayer' AND ref = 'reflection:2026-11-23'"))!;
    expect(row.body).toContain(b.saying.text);
    expect((await inst.rows<{ name: string }>("SELECT name FROM prayer_texts ORDER BY name")).map((x) => x.name)).toEqual(["hadith", "names"]);
  });

  test("a source that does not answer in time is a 504", async () => {
    const other = await startHearth({ clock, env: { ...sourceEnv, PRAYER_HADITH_TIMEOUT_MS: "200" } });
    try {
      sources.fail = "hang";
      const r = await other.call("prayer/saying");
      expect(r.status).toBe(504);
      expect(r.body.error).toMatchObject({ kind: "upstream_timeout", retry: true });
      expect(r.body.error.message).toContain("this instance does not hold it yet");
    } finally {
      sources.fail = null;
      await other.stop();
    }
  });

  test("garbage from the source is a 502, after the full copy was tried too; a missing minified copy falls back to the full one", async () => {
    const other = await startHearth({ clock, env: sourceEnv });
    try {
      sources.fail = "garbage";
      const full = sources.hits(HADITH_FULL);
      const r = await other.call("prayer/saying");
      expect(r.status).toBe(502);
      expect(r.body.error).toMatchObject({ kind: "upstream_failed", retry: true });
      expect(r.body.error.message).toContain("not JSON");
      expect(sources.hits(HADITH_FULL) - full).toBe(1);
      sources.fail = null;
      minMissing.on = true;
      const ok = await other.call("prayer/saying", { book: 2 });
      expect(ok.status).toBe(200);
      expect(sources.hits(HADITH_FULL) - full).toBe(2);
      expect((await other.row<{ url: string }>("SELECT url FROM prayer_texts WHERE name = 'hadith'"))!.url).toBe(`${sources.url}${HADITH_FULL}`);
    } finally {
      minMissing.on = false;
      sources.fail = null;
      await other.stop();
    }
  });
});

describe("a PRAYER_DATA folder with missing or malformed files", () => {
  let dir: string;
  let inst: Awaited<ReturnType<typeof startHearth>>;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "prayer-data-"));
    inst = await startHearth({ clock, env: { PRAYER_DATA: dir, ...sourceEnv } });
  });
  afterAll(() => {
    inst.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const put = (file: string, text: string) => writeFileSync(join(dir, file), text);
  const refusal = async (method: string, args: Record<string, unknown> = {}) => {
    const r = await inst.call(method, args);
    expect(r.status).toBe(501);
    expect(r.body.error.kind).toBe("not_configured");
    expect(r.body.error.stack).toBeUndefined();
    return r.body.error.message as string;
  };

  test("an empty folder: the saying comes from the public source", async () => {
    const r = await inst.call("prayer/saying");
    expect(r.status).toBe(200);
    expect(r.body.result.collection).toBe(edition.metadata.name);
    expect(r.body.result.source).toContain("hadith-api");
  });

  test("names alone: the reflection's name is the file's, its saying the public source's", async () => {
    put("names.json", readFileSync(join(DATA, "names.json"), "utf8"));
    const a = (await inst.call("prayer/reflection")).body.result;
    expect(fixtureNames.map((n) => n.number)).toContain(a.name.number);
    expect(a.name.transliteration).toStartWith("Test Name");
    expect(a.saying.collection).toBe(edition.metadata.name);
    expect(a.unavailable).toBeUndefined();
    expect(a.sources.names).toContain("PRAYER_DATA/names.json");
    expect(a.sources.hadith).toContain("hadith-api");
    const s = (await inst.call("prayer/search", { query: "light" })).body.result;
    expect(s.searched).toEqual(["the Quran (Saheeh International translation)", edition.metadata.name, "the names of Allah"]);
    expect(s.names.map((x: { transliteration: string }) => x.transliteration)).toEqual(["Test Name Three"]);
  });

  test("a file that is not JSON is named, on every method that reads it", async () => {
    put("bukhari.json", '{"collection": "Test collection", "books": [');
    for (const method of ["prayer/saying", "prayer/reflection"]) {
      const msg = await refusal(method);
      expect(msg).toStartWith("PRAYER_DATA/bukhari.json is malformed: it is not JSON");
    }
    expect(await refusal("prayer/search", { query: "patience" })).toStartWith("PRAYER_DATA/bukhari.json is malformed");
  });

  test("a file of the wrong shape says where", async () => {
    const cases: [string, unknown, string][] = [
      ["bukhari.json", { collection: "C", books: [{ book: 1, title: "T", hadiths: [{ n: 1, narrator: "N" }] }] }, "books[0].hadiths[0].text: "],
      ["bukhari.json", { collection: "C", books: [] }, "books: "],
      ["bukhari.json", [], "the whole file: "],
      ["bukhari.json", { collection: "C", books: [{ book: 1, title: "T", hadiths: [{ n: 1, narrator: "", text: "x" }] }, { book: 1, title: "U", hadiths: [{ n: 1, narrator: "", text: "y" }] }] }, "books has book 1 twice"],
      ["names.json", [{ number: "one", arabic: "", transliteration: "T", meaning: "M", description: "" }], "[0].number: "],
    ];
    for (const [file, data, where] of cases) {
      // The reflection reads both files; a sound hadith file leaves the names file to blame.
      if (file === "names.json") put("bukhari.json", readFileSync(join(DATA, "bukhari.json"), "utf8"));
      put(file, JSON.stringify(data));
      const msg = await refusal(file === "names.json" ? "prayer/reflection" : "prayer/saying");
      expect(msg).toStartWith(`PRAYER_DATA/${file} is malformed: ${where}`);
    }
  });

  test("a fixed file is read without a restart", async () => {
    put("names.json", readFileSync(join(DATA, "names.json"), "utf8"));
    put("bukhari.json", readFileSync(join(DATA, "bukhari.json"), "utf8"));
    const r = await inst.call("prayer/saying", { book: 5 });
    expect(r.status).toBe(200);
    expect(r.body.result.text).toBe(fixture.books.find((b) => b.book === 5)!.hadiths[0].text);
    const a = (await inst.call("prayer/reflection")).body.result;
    expect(a.unavailable).toBeUndefined();
  });
});
