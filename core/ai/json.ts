// Models asked for JSON often wrap it in a code fence or a sentence; this
// finds the JSON value in what they said.

/** The JSON value in a model's answer, or undefined when there is none. */
export function jsonIn(text: string): { value: unknown } | undefined {
  const t = text.trim();
  const tries = [t];
  const fence = /```(?:json|JSON)?\s*\n?([\s\S]*?)\n?```/.exec(t);
  if (fence) tries.push(fence[1].trim());
  const starts = [t.indexOf("{"), t.indexOf("[")].filter((i) => i >= 0);
  if (starts.length) {
    const from = Math.min(...starts);
    const close = t[from] === "{" ? "}" : "]";
    const to = t.lastIndexOf(close);
    if (to > from) tries.push(t.slice(from, to + 1));
  }
  for (const s of tries) {
    try {
      return { value: JSON.parse(s) };
    } catch {}
  }
  return undefined;
}
