// The API reads a request's origin and query without parsing its whole URL,
// and a query with nothing to decode without URLSearchParams: both must read
// exactly what the parsed URL would, for any text a client can send.
import { expect, test } from "bun:test";
import { HearthError } from "../../core/errors.ts";
import { partsOf } from "../../core/http/url.ts";
import { queryValues } from "../../core/validate.ts";

const grouped = (p: URLSearchParams) => {
  const out = new Map<string, string[]>();
  p.forEach((v, k) => out.set(k, [...(out.get(k) ?? []), v]));
  return out;
};

/** The refusal reading a query's values gives, or null when it reads. */
function refusal(q: string): HearthError | null {
  try {
    queryValues(q);
    return null;
  } catch (e) {
    if (e instanceof HearthError) return e;
    throw e;
  }
}

test("a query's values read from its text are URLSearchParams' own, whatever the text holds, save escapes that are not UTF-8, refused by name", () => {
  const cases = ["", "title=bench", "a=1&a=2&b=3", "a&b=&=c&&d==e&", "x=%F0%9F%98%80", "x=a+b%20c", "x=%zz&y=%", "x=%FF", "x=café&y=😀", "x='\"<>!$()*,;:@/?", "=&=&a"];
  const alphabet = ["a", "b", "=", "&", "%", "2", "0", "F", "+", " ", "é", "😀", "?", "/", "~"];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let i = 0; i < 2000; i++) cases.push(Array.from({ length: Math.floor(next() * 12) }, () => alphabet[Math.floor(next() * alphabet.length)]).join(""));
  // As a URL's query: URLSearchParams given text drops one leading "?", which the query after a URL's "?" keeps.
  for (const q of cases) {
    const theirs = grouped(new URLSearchParams(`?${q}`));
    // The cases hold no U+FFFD of their own: one that URLSearchParams gives stands for bytes it could not read as UTF-8.
    if ([...theirs].flat(2).some((v) => v.includes("\ufffd"))) expect([q, refusal(q)?.kind]).toEqual([q, "invalid_argument"]);
    else expect([q, queryValues(q)]).toEqual([q, theirs]);
  }
  expect(refusal("a=1&x=%FF")).toMatchObject({ kind: "invalid_argument", field: "x" });
  expect(refusal("title=a%ED%A0%80")).toMatchObject({ kind: "invalid_argument", field: "title" });
});

test("a request's origin and query text are the parsed URL's", () => {
  for (const url of [
    "http://127.0.0.1:7801/api/v1/notes/get?title=bench",
    "http://LOCALHOST:80/api/v1/x/y?a=1&a=2&b=%F0%9F%98%80+c%20d",
    "http://h/api?x=1#frag?y=2",
    "http://h/api#f?x=1",
    "http://h?x=1",
    "http://[::1]:8080/p?q='\"<>",
    "https://Ex.AMPLE.com:443/p?x=café&y=😀",
    "http://h/p",
    "http://h/p?",
    "http://h/p??x=1&?y",
    "http://h/p??x=%41",
  ]) {
    const parsed = new URL(url);
    const parts = partsOf(url);
    expect([url, parts.origin]).toEqual([url, parsed.origin]);
    expect([url, queryValues(parts.query)]).toEqual([url, grouped(parsed.searchParams)]);
  }
});
