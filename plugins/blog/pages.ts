// Server-rendered blog pages: the index of public posts and one post.
import { renderMarkdown, escapeHtml, notFoundPage, publicPage as page } from "hearth";
import type { posts } from "./schema.ts";

type Post = typeof posts.$inferSelect;
interface Summary {
  id: string;
  title: string;
  snippet: string;
  author: string;
  created: string;
  tags: string;
}

const feedLink = (base: string, title: string) => `<link rel="alternate" type="application/atom+xml" title="${escapeHtml(title)}" href="${escapeHtml(base)}/blog/feed.xml">`;
const date = (iso: string) => `<time datetime="${iso}">${iso.slice(0, 10)}</time>`;
const tagList = (tags: string) => (tags ? ` · ${tags.split(",").map(escapeHtml).join(", ")}` : "");

type Reader = { username: string; admin?: boolean } | null;
/** A page with a signed-in reader's own header is theirs alone: it is not kept by shared caches. */
const cacheFor = (reader: Reader) => (reader ? "private, no-store" : "public, max-age=60");

export function indexPage(base: string, title: string, list: Summary[], reader: Reader = null): Response {
  const items = list.length
    ? `<ul class="posts">${list
        .map(
          (p) => `<li><h2><a href="/blog/${encodeURIComponent(p.id)}">${escapeHtml(p.title)}</a></h2>
<p>${escapeHtml(p.snippet)}</p><small>${escapeHtml(p.author)} · ${date(p.created)}${tagList(p.tags)}</small></li>`,
        )
        .join("\n")}</ul>`
    : "<p>Nothing published yet.</p>";
  return page({
    title,
    head: feedLink(base, title),
    body: `<main><h1>${escapeHtml(title)}</h1><p><a href="/blog/feed.xml">Atom feed</a></p>${items}</main>`,
    headers: { "cache-control": cacheFor(reader) },
    site: { account: reader },
  });
}

export function postPage(base: string, title: string, post: Post | null, reader: Reader = null): Response {
  if (!post) return notFoundPage("There is no public post at this address.");
  const created = new Date(post.created).toISOString();
  return page({
    title: post.title,
    head: feedLink(base, title),
    headers: post.private ? { "cache-control": "private, no-store", "x-robots-tag": "noindex" } : { "cache-control": cacheFor(reader) },
    site: { account: reader },
    body: `<nav aria-label="Blog"><p><a href="/blog">← ${escapeHtml(title)}</a></p></nav>
<main><article>
<h1>${escapeHtml(post.title)}</h1>
<p><small>${escapeHtml(post.authorName)} · ${date(created)}${tagList(post.tags)}</small></p>
${post.private ? "<p><strong>Private:</strong> only you can see this post.</p>" : ""}
${renderMarkdown(post.content)}
</article></main>`,
  });
}
