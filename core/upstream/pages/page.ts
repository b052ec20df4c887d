// One page fetched on a caller's behalf and made readable: a URL a caller
// typed, or a link from an outside feed, which is no more trusted. Its limits
// are the WEB_FETCH_* settings a plugin using it declares.
import { invalid } from "../../errors.ts";
import type { BaseCtx } from "../../plugin.ts";
import pkg from "../../../package.json";
import { decodeText, guardedFetch } from "./guarded.ts";
import { readable } from "./readable.ts";
import { dnsServers } from "./resolve.ts";

/** Most text an answer carries; longer pages are cut and say so. */
const MAX_TEXT = 200_000;

export function fetchLimits(config: Readonly<Record<string, string>>) {
  return {
    maxBytes: Number(config.WEB_FETCH_MAX_BYTES) > 0 ? Number(config.WEB_FETCH_MAX_BYTES) : 5_000_000,
    timeoutMs: Number(config.WEB_FETCH_TIMEOUT_MS) > 0 ? Number(config.WEB_FETCH_TIMEOUT_MS) : 15_000,
    allowLoopback: config.WEB_FETCH_ALLOW_LOOPBACK === "true",
    dns: dnsServers(config.WEB_FETCH_DNS),
  };
}

export function userAgent(config: Readonly<Record<string, string>>) {
  const contact = config.HEARTH_CONTACT;
  return `Mozilla/5.0 (compatible; Hearth/${pkg.version}${config.HEARTH_PUBLIC_URL ? `; +${config.HEARTH_PUBLIC_URL}` : ""}${contact ? `; ${contact}` : ""})`;
}

export async function fetchReadable(ctx: BaseCtx, url: string, field: string) {
  const page = await guardedFetch(url, {
    field,
    ...fetchLimits(ctx.config),
    headers: { "user-agent": userAgent(ctx.config), accept: "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1" },
  });
  const type = (page.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
  const html = type === "" || type === "text/html" || type === "application/xhtml+xml";
  if (!html && !type.startsWith("text/")) throw invalid(field, `${page.url} is ${type}, not a web page; only HTML and text pages are read`);
  const raw = decodeText(page.body, page.headers["content-type"]);
  const r = html ? readable(raw, page.url) : { title: null, byline: null, site: null, published: null, lang: null, excerpt: null, text: raw.trim(), article: false };
  const truncated = r.text.length > MAX_TEXT;
  return {
    url: page.url,
    ...(page.url !== url ? { requested: url } : {}),
    title: r.title,
    byline: r.byline,
    site: r.site,
    published: r.published,
    lang: r.lang,
    excerpt: r.excerpt,
    text: truncated ? r.text.slice(0, MAX_TEXT) : r.text,
    chars: r.text.length,
    truncated,
    article: r.article,
    content_type: type || "text/html",
    fetched_at: ctx.clock.now().toISOString(),
  };
}
