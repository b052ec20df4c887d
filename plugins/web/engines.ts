// Search engines web/search can use: a SearXNG instance's JSON API (keyless,
// usually self-hosted) or Brave's Search API (a key). SearXNG is preferred
// when both are set, since it costs nothing per query.
import { notConfigured, upstream, type Ctx, defineProvider } from "hearth";

defineProvider({ name: "SEARXNG", label: "SearXNG", url: "", concurrency: 2, timeoutMs: 15_000 });
defineProvider({ name: "BRAVE", label: "Brave Search", url: "https://api.search.brave.com", concurrency: 1, rate: { count: 1, perMs: 1000 } });

export interface Hit {
  title: string;
  url: string;
  snippet: string;
  published: string | null;
  source: string | null;
}

export type Engine = "searxng" | "brave";

export function engineOf(config: Readonly<Record<string, string>>): Engine | null {
  if (config.SEARXNG_URL) return "searxng";
  if (config.BRAVE_API_KEY) return "brave";
  return null;
}

export function needEngine(config: Readonly<Record<string, string>>): Engine {
  const e = engineOf(config);
  if (!e) throw notConfigured("web search needs a search engine: set SEARXNG_URL to a SearXNG instance with the JSON format enabled, or BRAVE_API_KEY to a Brave Search API key");
  return e;
}

const TTL = 15 * 60;
const str = (v: unknown) => (typeof v === "string" ? v : "");
const clean = (s: string) => s.replace(/<[^>]+>/g, "").replace(/\s+/g, " ").trim();

/** SearXNG's /search?format=json: results with url, title, content, engine(s), publishedDate. */
export function searxRequest(query: string) {
  return { query: { q: query, format: "json", safesearch: 1 } };
}

function searxHits(body: any): Hit[] {
  if (!body || !Array.isArray(body.results)) throw new Error("no results array");
  return body.results
    .filter((r: any) => typeof r?.url === "string" && /^https?:/.test(r.url))
    .map((r: any) => ({
      title: clean(str(r.title)) || r.url,
      url: r.url,
      snippet: clean(str(r.content)),
      published: str(r.publishedDate) || null,
      source: Array.isArray(r.engines) && r.engines.length ? r.engines.join(", ") : str(r.engine) || null,
    }));
}

/** Brave's /res/v1/web/search: web.results with title, url, description, page_age/age; news.results alike. */
export function braveRequest(query: string, count: number) {
  return { query: { q: query, count: Math.min(20, count) } };
}

function braveHits(body: any): Hit[] {
  if (!body || typeof body !== "object") throw new Error("not an object");
  const web = Array.isArray(body.web?.results) ? body.web.results : [];
  const news = Array.isArray(body.news?.results) ? body.news.results : [];
  const seen = new Set<string>();
  const out: Hit[] = [];
  for (const r of [...web, ...news]) {
    if (typeof r?.url !== "string" || seen.has(r.url)) continue;
    seen.add(r.url);
    out.push({
      title: clean(str(r.title)) || r.url,
      url: r.url,
      snippet: clean(str(r.description)),
      published: str(r.page_age) || str(r.age) || null,
      source: str(r.profile?.name) || str(r.meta_url?.hostname) || null,
    });
  }
  return out;
}

export async function search(ctx: Ctx, query: string, limit: number) {
  const engine = needEngine(ctx.config);
  if (engine === "searxng") {
    const f = await ctx.http.get("SEARXNG", "/search", { ...searxRequest(query), ttl: TTL, parse: searxHits, accept: [] });
    return { engine, hits: f.data.slice(0, limit), about: f.about };
  }
  const f = await ctx.http.get("BRAVE", "/res/v1/web/search", {
    ...braveRequest(query, limit),
    ttl: TTL,
    headers: { "x-subscription-token": ctx.config.BRAVE_API_KEY, accept: "application/json" },
    accept: [401, 403, 422],
    parse: (body, status) => {
      if (status === 401 || status === 403) throw upstream("upstream_failed", `Brave Search refused the key in BRAVE_API_KEY (HTTP ${status})`);
      if (status === 422) throw upstream("upstream_failed", "Brave Search refused the query (HTTP 422)");
      return braveHits(body);
    },
  });
  return { engine, hits: f.data.slice(0, limit), about: f.about };
}

export function peekSearch(ctx: Ctx, query: string, limit: number): boolean | Promise<boolean> {
  const engine = engineOf(ctx.config);
  if (engine === "searxng") return ctx.http.peek("SEARXNG", "/search", searxRequest(query));
  if (engine === "brave") return ctx.http.peek("BRAVE", "/res/v1/web/search", braveRequest(query, limit));
  return true;
}
