// Asks the model, checks what it said, and when the answer is off (not one
// of the labels, not JSON, not matching the schema) asks once more with what
// was wrong; a second bad answer is a 502 that says why.
import { type ChatMessage, HearthError, type Ctx } from "hearth";

export type Check<T> = (text: string) => { ok: T } | { again: string; problem: string; extra?: Record<string, unknown> };

export interface Asked<T> {
  value: T;
  model: string;
}

export async function ask<T>(ctx: Ctx, messages: ChatMessage[], check: Check<T>, o: { task?: "extract"; json?: boolean } = {}): Promise<Asked<T>> {
  const history = [...messages];
  for (let attempt = 0; ; attempt++) {
    const a = await ctx.ai.chat({ messages: history, task: o.task, json: o.json });
    // A cut-off translation or summary reads as whole; asking again hits the same limit.
    if (a.finish_reason === "length")
      throw new HearthError("upstream_failed", "the model stopped at its output limit before finishing: the text is too long for it; send a shorter part", { retry: false });
    const verdict = check(a.text);
    if ("ok" in verdict) return { value: verdict.ok, model: a.model };
    if (attempt === 1) throw new HearthError("upstream_failed", `the model's answer was unusable twice: ${verdict.problem}`, { retry: true, extra: verdict.extra });
    history.push({ role: "assistant", content: a.text }, { role: "user", content: verdict.again });
  }
}

/** The text cap every text method shares: 413 with the cap and the length. */
export const TEXT_CAP = 30_000;

export function capped(text: string): string {
  // Characters as people count them (code points), not UTF-16 units.
  let n = 0;
  for (const _ of text) if (++n > TEXT_CAP) break;
  if (n > TEXT_CAP) {
    const length = [...text].length;
    throw new HearthError("too_large", `text is ${length} characters; the cap is ${TEXT_CAP}`, { field: "text", extra: { limit: TEXT_CAP, length } });
  }
  return text;
}

/** The caller's text as the model sees it: fenced off, so it is read as data and not as instructions. */
export const asData = (text: string) => `<text>\n${text}\n</text>`;
