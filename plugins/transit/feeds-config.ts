// TRANSIT_FEEDS: the published GTFS archives this instance imports, as URLs
// separated by commas, spaces or new lines, each optionally named "name=URL".
import { invalid } from "../../core/errors.ts";

export interface ConfiguredFeed {
  id: string;
  url: string;
}

export function configuredFeeds(setting: string | undefined): ConfiguredFeed[] {
  const out: ConfiguredFeed[] = [];
  for (const item of (setting ?? "").split(/[\s,]+/)) {
    if (!item) continue;
    const eq = item.indexOf("=");
    const named = eq > 0 && !item.slice(0, eq).includes("/");
    const url = named ? item.slice(eq + 1) : item;
    if (!/^https?:\/\//.test(url)) throw invalid("TRANSIT_FEEDS", `TRANSIT_FEEDS entry "${item}" is not an http(s) URL`);
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
