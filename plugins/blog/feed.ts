// The Atom feed (RFC 4287) of public posts at /blog/feed.xml.
import { renderMarkdown } from "hearth";
import type { posts } from "./schema.ts";
import { snippetOf } from "./text.ts";

type Post = typeof posts.$inferSelect;

// Characters XML 1.0 forbids even when escaped; a feed reader rejects the whole feed over one.
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

export function xml(s: string): string {
  return s.replace(NOT_XML, "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" })[c]!);
}

const iso = (ms: number) => new Date(ms).toISOString();

export function atomFeed(base: string, title: string, list: Post[]): string {
  const updated = list.reduce((m, p) => Math.max(m, p.updated), 0);
  const entries = list.map(
    (p) => `  <entry>
    <title type="text">${xml(p.title)}</title>
    <id>${xml(`${base}/blog/${p.id}`)}</id>
    <link rel="alternate" type="text/html" href="${xml(`${base}/blog/${p.id}`)}"/>
    <published>${iso(p.created)}</published>
    <updated>${iso(p.updated)}</updated>
    <author><name>${xml(p.authorName)}</name></author>
${p.tags
  .split(",")
  .filter(Boolean)
  .map((t) => `    <category term="${xml(t)}"/>`)
  .join("\n")}
    <summary type="text">${xml(snippetOf(p.content))}</summary>
    <content type="html">${xml(renderMarkdown(p.content))}</content>
  </entry>`,
  );
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title type="text">${xml(title)}</title>
  <id>${xml(`${base}/blog`)}</id>
  <link rel="self" type="application/atom+xml" href="${xml(`${base}/blog/feed.xml`)}"/>
  <link rel="alternate" type="text/html" href="${xml(`${base}/blog`)}"/>
  <updated>${iso(updated)}</updated>
  <generator>Hearth</generator>
${entries.join("\n")}
</feed>
`;
}

export function feedResponse(base: string, title: string, list: Post[]): Response {
  return new Response(atomFeed(base, title, list), {
    headers: { "content-type": "application/atom+xml; charset=utf-8", "cache-control": "public, max-age=300", "x-content-type-options": "nosniff" },
  });
}
