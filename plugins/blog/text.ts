// Titles, snippets and tags derived from what an author wrote.
import { plainText } from "hearth";

const TITLE_MAX = 80;

function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.!?-]+$/, "")}…`;
}

/**
 * Where a title is looked for: lexing and rendering a whole 100 KB post takes most of a second of CPU, its head next
 * to nothing, and a title is at most TITLE_MAX characters of the first block, which starts there.
 */
const TITLE_HEAD = 10_000;

/** The first sentence of the body's first block (a heading counts), trimmed to a sensible length on a word boundary. */
export function titleFrom(content: string): string {
  const { lexer } = require("marked") as typeof import("marked");
  const isBlock = (t: { type: string }) => t.type === "heading" || t.type === "paragraph" || t.type === "text";
  let body = content.slice(0, TITLE_HEAD);
  let first = lexer(body).find(isBlock);
  // A head holding no block of words (a long code block first, say) is read whole, to reach the first that follows.
  if (!first && body.length < content.length) first = lexer((body = content)).find(isBlock);
  const text = plainText(first?.type === "heading" ? first.text : (first?.raw ?? body)) || plainText(body);
  const sentence = /^(.+?[.!?])(\s|$)/.exec(text)?.[1] ?? text;
  return clip(sentence.replace(/[.]$/, ""), TITLE_MAX) || "Untitled";
}

export function snippetOf(content: string, max = 200): string {
  // Rendering a whole 100 KB post takes over half a second, and a listing renders one per post: the head is enough for a snippet.
  return clip(plainText(content.slice(0, max * 10)), max);
}

/** "Garden, #Food ,garden,  slow cooking" -> "garden,food,slow-cooking" */
export function normaliseTags(tags: string): string {
  const seen = new Set<string>();
  for (const raw of tags.split(",")) {
    const t = raw
      .trim()
      .replace(/^#+/, "")
      .toLowerCase()
      .replace(/\s+/g, "-")
      .slice(0, 40);
    if (t) seen.add(t);
  }
  return [...seen].join(",");
}
