// The feeds followed: plugins/news/feeds.json unless NEWS_FEEDS_FILE names another
// file of the same shape. A bad file stops the start with what is wrong.
import { settingJson } from "hearth";
// Imported, not read from disk, so a compiled binary carries the default list.
import defaults from "./feeds.json";

export interface FeedDef {
  topic: string;
  name: string;
  url: string;
}

const cache = new Map<string, FeedDef[]>();

export function followedFeeds(config: Readonly<Record<string, string>>): FeedDef[] {
  const { file, data } = settingJson(config.NEWS_FEEDS_FILE, { name: "plugins/news/feeds.json", data: defaults }, "news feeds");
  const held = cache.get(file);
  if (held) return held;
  const parsed = data as any;
  if (!parsed || !Array.isArray(parsed.feeds)) throw new Error(`news feeds ${file}: needs {"feeds": [{"topic", "name", "url"}, ...]}`);
  const out: FeedDef[] = [];
  const seen = new Set<string>();
  parsed.feeds.forEach((f: any, i: number) => {
    const where = `news feeds ${file}: feeds[${i}]`;
    if (!f || typeof f.url !== "string" || !/^https?:\/\//.test(f.url)) throw new Error(`${where}.url must be an http or https URL`);
    if (typeof f.topic !== "string" || !/^[a-z][a-z0-9-]*$/.test(f.topic)) throw new Error(`${where}.topic must be a lowercase word such as "world"`);
    if (seen.has(f.url)) return;
    seen.add(f.url);
    out.push({ topic: f.topic, name: typeof f.name === "string" && f.name.trim() ? f.name.trim() : new URL(f.url).host, url: f.url });
  });
  cache.set(file, out);
  return out;
}

export const topicsOf = (feeds: FeedDef[]) => [...new Set(feeds.map((f) => f.topic))];
