// A page reduced to what a reader came for: Mozilla's Readability (Firefox
// Reader View) picks the article out of the page on a server-side DOM, and
// the result is given back as plain text with paragraphs, headings and list
// items kept apart, which is what agents and terminals read best.
import type * as ReadabilityModule from "@mozilla/readability";
import type * as LinkedomModule from "linkedom";

// Loaded on first use: linkedom alone adds a tenth of a second to every process start (the CLI included).
let linkedom: typeof LinkedomModule | undefined;
let readability: typeof ReadabilityModule | undefined;
const parseHTML: (typeof LinkedomModule)["parseHTML"] = (html) => (linkedom ??= require("linkedom") as typeof LinkedomModule).parseHTML(html);
const Reader = () => (readability ??= require("@mozilla/readability") as typeof ReadabilityModule).Readability;

export interface Readable {
  title: string | null;
  byline: string | null;
  site: string | null;
  published: string | null;
  lang: string | null;
  excerpt: string | null;
  text: string;
  /** False when the page did not look like an article and its whole body text is given instead. */
  article: boolean;
}

const BLOCK = new Set(["p", "div", "section", "article", "header", "footer", "main", "aside", "blockquote", "pre", "figure", "figcaption", "table", "tr", "ul", "ol", "dl", "dt", "dd", "hr", "form", "details", "summary"]);
const SKIP = new Set(["script", "style", "noscript", "template", "svg", "iframe", "nav"]);

/** Text of an element tree with blocks separated by blank lines. */
function textOf(root: any): string {
  const out: string[] = [];
  const walk = (node: any) => {
    if (node.nodeType === 3) {
      out.push(node.textContent.replace(/\s+/g, " "));
      return;
    }
    if (node.nodeType !== 1) {
      for (const c of node.childNodes ?? []) walk(c);
      return;
    }
    const tag = String(node.tagName).toLowerCase();
    if (SKIP.has(tag)) return;
    if (tag === "br") return void out.push("\n");
    const heading = /^h([1-6])$/.exec(tag);
    if (heading) out.push(`\n\n${"#".repeat(Number(heading[1]))} `);
    else if (tag === "li") out.push("\n- ");
    else if (tag === "td" || tag === "th") out.push(" | ");
    else if (BLOCK.has(tag)) out.push("\n\n");
    if (tag === "pre") {
      out.push(node.textContent);
    } else for (const c of node.childNodes) walk(c);
    if (heading || BLOCK.has(tag)) out.push("\n\n");
  };
  walk(root);
  return out
    .join("")
    .split("\n")
    .map((l) => l.replace(/[ \t]+/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .replace(/\n- \n/g, "\n")
    .trim();
}

export function readable(html: string, url: string): Readable {
  // A <base> makes Readability resolve the page's relative links against where it came from.
  const withBase = /<base\s/i.test(html) ? html : html.replace(/<head([^>]*)>/i, `<head$1><base href="${url.replace(/"/g, "&quot;")}">`);
  const { document } = parseHTML(withBase);
  const lang = document.documentElement?.getAttribute?.("lang") || null;
  const pageTitle = document.querySelector("title")?.textContent?.trim() || null;
  let parsed: ReturnType<ReadabilityModule.Readability<string>["parse"]> = null;
  try {
    const Readability = Reader();
    parsed = new Readability(document as any, { charThreshold: 200 }).parse();
  } catch {
    parsed = null;
  }
  if (parsed?.content) {
    const { document: inner } = parseHTML(`<!doctype html><html><body>${parsed.content}</body></html>`);
    const text = textOf(inner.body);
    if (text)
      return {
        title: parsed.title?.trim() || pageTitle,
        byline: parsed.byline?.trim() || null,
        site: parsed.siteName?.trim() || null,
        published: parsed.publishedTime || null,
        lang: parsed.lang || lang,
        excerpt: parsed.excerpt?.trim() || null,
        text,
        article: true,
      };
  }
  // Readability gave up (a short page, a listing): the body's own text, without scripts and menus.
  const { document: again } = parseHTML(html);
  return { title: pageTitle, byline: null, site: null, published: null, lang, excerpt: null, text: textOf(again.body ?? again), article: false };
}

/** Plain text of an HTML fragment (a feed item's summary). */
export function plainFromHtml(fragment: string): string {
  if (!/[<&]/.test(fragment)) return fragment.replace(/\s+/g, " ").trim();
  const { document } = parseHTML(`<!doctype html><html><body>${fragment}</body></html>`);
  return textOf(document.body).replace(/\s*\n\s*/g, " ").trim();
}
