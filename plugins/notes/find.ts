// What the search across everything finds among notes: those whose title and
// text hold every word typed, titles matching first, with the words around
// the first match.
import type { FoundItem } from "hearth";

interface Shaped {
  title: string;
  text: string;
}

function around(text: string, word: string): string {
  const flat = text.replace(/[#*_>`~]+/g, "").replace(/^\s*[-+] /gm, "").replace(/\s+/g, " ").trim();
  const at = flat.toLowerCase().indexOf(word);
  if (at < 0) return flat.slice(0, 100);
  const from = Math.max(0, at - 40);
  return `${from ? "…" : ""}${flat.slice(from, at + 60)}${at + 60 < flat.length ? "…" : ""}`;
}

export function foundNotes(result: unknown, query: string): FoundItem[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const notes = (Array.isArray(result) ? result : []) as Shaped[];
  return notes
    .filter((n) => words.every((w) => `${n.title}\n${n.text}`.toLowerCase().includes(w)))
    .sort((a, b) => Number(words.every((w) => b.title.toLowerCase().includes(w))) - Number(words.every((w) => a.title.toLowerCase().includes(w))))
    .map((n) => ({ title: n.title, detail: around(n.text, words[0] ?? ""), href: `/my/notes?open=${encodeURIComponent(n.title)}` }));
}
