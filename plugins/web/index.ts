import { Type as T } from "@sinclair/typebox";
import { invalid, definePlugin, read, type Ctx, freeWhenHeld, fetchReadable } from "hearth";
import { peekSearch, search } from "./engines.ts";

export default definePlugin({
  name: "web",
  description: "Web search through a configured engine (SearXNG or Brave) and readable page fetches for account holders, refusing private and internal addresses.",
  needs: ["http"],
  providers: ["BRAVE", "SEARXNG"],
  settings: ["HEARTH_CONTACT", "HEARTH_PUBLIC_URL"],
  config: {
    SEARXNG_URL: { default: "", description: "Base URL of a SearXNG instance with the JSON format enabled (search.formats: [html, json]); keyless, preferred when set." },
    BRAVE_API_KEY: { default: "", description: "Brave Search API subscription token, used for web/search when SEARXNG_URL is empty." },
    BRAVE_URL: { default: "", description: "Base URL of the Brave Search API (https://api.search.brave.com when empty)." },
    WEB_FETCH_MAX_BYTES: { default: "5000000", description: "Largest page web/fetch reads, in bytes after decompression (413 past it)." },
    WEB_FETCH_TIMEOUT_MS: { default: "15000", description: "Time web/fetch allows a page, redirects included, in milliseconds." },
    WEB_FETCH_DNS: { default: "", description: "DNS servers web/fetch and news articles look names up with (host or host:port, comma separated); the system's resolver when empty." },
    WEB_FETCH_ALLOW_LOOPBACK: {
      default: "false",
      description: "true lets web/fetch and news articles reach 127.0.0.0/8 and ::1. For tests against loopback fixture servers only; never on a real instance.",
    },
  },
  methods: {
    search: read({
      description:
        "Searches the web for current information and news through the instance's engine (SearXNG at SEARXNG_URL, else Brave with BRAVE_API_KEY; 501 when neither is set). Gives title, URL, snippet and, where known, the date. `limit` 1-20, default 10. 2 credits; a repeat within 15 minutes is answered from cache for free.",
      args: T.Object({
        query: T.String({ minLength: 1, maxLength: 400, description: "What to search for." }),
        limit: T.Optional(T.Integer({ minimum: 1, maximum: 20, description: "Results, 1-20; default 10." })),
      }),
      access: "public",
      untrusted: true,
      openWorld: true,
      price: (a, ctx) => freeWhenHeld(peekSearch(ctx as Ctx, a.query.trim(), a.limit ?? 10), 2),
      async run(args, ctx) {
        const query = args.query.trim();
        if (!query) throw invalid("query", "query must not be blank");
        const r = await search(ctx, query, args.limit ?? 10);
        return { query, engine: r.engine, results: r.hits, count: r.hits.length, about: r.about };
      },
    }),
    fetch: read({
      description:
        "Fetches a web page and returns its readable content (title, byline, date, text) as Firefox Reader View would show it. Needs an account. Only http and https; private, loopback, link-local and cloud metadata addresses are refused, checked after DNS resolution and on every redirect; pages over WEB_FETCH_MAX_BYTES are refused (413). A name DNS says does not exist is 502 and DNS that cannot be asked 503, both worth retrying.",
      args: T.Object({ url: T.String({ minLength: 1, maxLength: 4000, description: "The page's http or https URL." }) }),
      access: "account",
      outbound: true,
      untrusted: true,
      openWorld: true,
      async run({ url }, ctx) {
        return fetchReadable(ctx, url.trim(), "url");
      },
    }),
  },
});
