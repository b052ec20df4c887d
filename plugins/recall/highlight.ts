// Marks the words of a snippet that the query matched (every query word
// matches as a prefix, as ctx.index searches), in **bold** as Markdown reads.
export function highlight(snippet: string, query: string): string {
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [])].slice(0, 32);
  if (!words.length) return snippet;
  return snippet.replace(/[\p{L}\p{N}_]+/gu, (w) => {
    const lower = w.toLowerCase();
    return words.some((q) => lower.startsWith(q)) ? `**${w}**` : w;
  });
}
