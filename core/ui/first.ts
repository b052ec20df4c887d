// The answers the shell page carries for the reads its view makes as it is
// first drawn (a screen's `reads`, core/views/shell.ts): useQuery takes its
// answer from here instead of asking after the scripts ran, so the view draws
// what it shows in the same moment it starts. Each answer serves once, and
// only while the view is first drawn: one taken later would be as old as the
// page.

let answers: Map<string, unknown> | null = null;

function load(): Map<string, unknown> {
  const found = new Map<string, unknown>();
  const block = typeof document === "undefined" ? null : document.getElementById("first-reads");
  if (block?.textContent) {
    try {
      for (const [k, v] of Object.entries(JSON.parse(block.textContent) as Record<string, unknown>)) found.set(k, v);
    } catch {}
  }
  return found;
}

/** The page's answer to call(method, args), once; null when it carries none. */
export function pageAnswer(method: string, args: Record<string, unknown>): { value: unknown } | null {
  answers ??= load();
  const key = JSON.stringify([method, args]);
  if (!answers.has(key)) return null;
  const value = answers.get(key);
  answers.delete(key);
  return { value };
}

/** Called once the view is first drawn: what it did not take is dropped. */
export function dropPageAnswers() {
  answers = new Map();
}
