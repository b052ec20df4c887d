// What the call paths read of a request's URL: its origin and its query's text.
/** The canonical origin of each "scheme://host" a request was addressed to: an instance is reached under a handful of names. */
const origins = new Map<string, string>();
function originOf(prefix: string): string {
  let origin = origins.get(prefix);
  if (origin === undefined) {
    origin = new URL(prefix).origin;
    if (origins.size >= 64) origins.clear();
    origins.set(prefix, origin);
  }
  return origin;
}

/**
 * A request's origin, and its query's text, without parsing the whole URL on
 * every call: the server's URLs are absolute, and the query's values read the
 * same from the raw text as from a parsed URL, which only percent-encodes
 * what reading its values decodes again (see coerceQuery).
 */
export function partsOf(url: string): { origin: string; query: string } {
  const from = url.indexOf("//") + 2;
  let end = from;
  while (end < url.length && url[end] !== "/" && url[end] !== "?" && url[end] !== "#") end++;
  const q = url.indexOf("?", end);
  const hash = url.indexOf("#", end);
  const query = q < 0 || (hash >= 0 && hash < q) ? "" : url.slice(q + 1, hash < 0 ? undefined : hash);
  return { origin: originOf(url.slice(0, end)), query };
}
