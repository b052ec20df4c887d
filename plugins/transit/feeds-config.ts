// TRANSIT_FEEDS: the published GTFS archives this instance imports, as URLs
// separated by commas, spaces or new lines, each optionally named "name=URL".
export interface ConfiguredFeed {
  id: string;
  url: string;
}

/** The feeds named in the setting; entries that are not http(s) URLs are left out and listed in `unusable`. */
export function configuredFeeds(setting: string | undefined): ConfiguredFeed[] & { unusable?: string[] } {
  const out: ConfiguredFeed[] & { unusable?: string[] } = [];
  for (const item of (setting ?? "").split(/[\s,]+/)) {
    if (!item) continue;
    const eq = item.indexOf("=");
    const named = eq > 0 && !item.slice(0, eq).includes("/");
    const url = named ? item.slice(eq + 1) : item;
    if (!/^https?:\/\/[^\s/]+/.test(url) || !URL.canParse(url)) {
      (out.unusable ??= []).push(item);
      continue;
    }
    const id = named ? item.slice(0, eq) : idFor(url);
    if (!out.some((f) => f.id === id)) out.push({ id, url });
  }
  return out;
}

// A readable id that stays the same for the same URL: the host and a short hash.
function idFor(url: string): string {
  const host = new URL(url).hostname.replace(/^www\./, "").replace(/[^a-z0-9]+/gi, "-");
  const h = new Bun.CryptoHasher("sha256").update(url).digest("hex").slice(0, 6);
  return `${host}-${h}`;
}
