// apps/build: the model writes the whole page; the page is checked the way
// apps/test checks any page, plus what a built app must do (keep its data in
// hearth.store), sent back once with what is wrong, and refused after that.
import { HearthError, type ChatMessage, type Ctx } from "hearth";
import { inspect, MAX_HTML_BYTES, type Finding } from "./check.ts";

export const BUILD_PRICE = 15;

const SYSTEM = `You write small web apps. Answer with ONE complete HTML page and nothing else, starting with <!doctype html>.

Rules:
- All CSS in <style> and all JavaScript in <script> elements inside the page. No <script src>, no stylesheet links, no fonts, images or anything else from the network: the page runs in a sandbox with no network at all.
- The sandbox has no localStorage, sessionStorage, indexedDB or cookies. Keep every piece of data with the global \`hearth\` object, which is already defined:
    await hearth.store.get(key)          // the stored JSON value, or null
    await hearth.store.set(key, value)   // any JSON value
    await hearth.store.remove(key)
    await hearth.store.keys(prefix)      // the keys, sorted
  Load the data when the page starts and save after every change. The person is asked the first time the page uses the store; if they say no, the call rejects, so the page should go on working with what it holds in memory.
- No <iframe>, <object> or <embed>, and no document.write: the sandbox removes nested frames and has no document.write.
- Put a short <title>, and <meta name="description" content="one sentence on what it does"> and <meta name="keywords" content="two or three comma-separated tags"> in <head>.
- Plain, accessible HTML: labels on inputs, buttons for actions, readable on a phone, light and dark colour schemes.
- Keep it under ${Math.floor(MAX_HTML_BYTES / 1024)} KB.`;

/** The page in a model's answer: a fenced block, or the text from <!doctype (or <html) to </html>. */
export function pageIn(answer: string): string | null {
  const fence = /```(?:html|HTML)?\s*\n([\s\S]*?)\n?```/.exec(answer);
  const text = fence ? fence[1] : answer;
  const start = text.search(/<!doctype html|<html[\s>]/i);
  if (start < 0) return null;
  const end = text.toLowerCase().lastIndexOf("</html>");
  return (end > start ? text.slice(start, end + "</html>".length) : text.slice(start)).trim();
}

const decode = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
function meta(html: string, name: string): string | null {
  const tag = new RegExp(`<meta\\s+[^>]*name=["']${name}["'][^>]*>`, "i").exec(html)?.[0];
  const content = tag && /content=(["'])([\s\S]*?)\1/i.exec(tag);
  return content ? decode(content[2]).trim() : null;
}

/** What is wrong with a built page; empty when it may be saved. */
export function buildProblems(ctx: Ctx, html: string | null, finish: string): Finding[] {
  if (html === null) return [{ kind: "parse", message: "the answer held no HTML page (it must start with <!doctype html>)" }];
  const report = inspect(html, (p) => !!ctx.methods.get(p));
  const problems = [...report.problems];
  if (finish === "length") problems.push({ kind: "parse", message: "the page was cut off before its end; make it shorter" });
  if (/\b(localStorage|sessionStorage|indexedDB)\b/.test(html))
    problems.push({ kind: "blocked_source", message: "the page uses browser storage, which the sandbox does not have; keep data with hearth.store instead" });
  if (report.storeCalls === 0) problems.push({ kind: "no_script", message: "the page never calls hearth.store, so nothing it holds would be kept" });
  return problems;
}

export interface BuiltFields {
  name: string;
  html: string;
  description?: string;
  tags?: string;
}

export async function build<R>(ctx: Ctx, prompt: string, save: (fields: BuiltFields) => Promise<R>): Promise<R> {
  const messages: ChatMessage[] = [
    { role: "system", content: SYSTEM },
    { role: "user", content: `Build this app:\n\n${prompt}` },
  ];
  let problems: Finding[] = [];
  for (let attempt = 0; attempt < 2; attempt++) {
    const a = await ctx.ai.chat({ messages });
    const html = pageIn(a.text);
    problems = buildProblems(ctx, html, a.finish_reason);
    if (problems.length === 0 && html) {
      const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
      const name = (title ? decode(title).trim() : "") || prompt.split(/[.\n]/)[0].slice(0, 60).trim() || "App";
      return save({
        name: name.slice(0, 100),
        html,
        description: (meta(html, "description") || prompt).slice(0, 1000),
        tags: (meta(html, "keywords") ?? "")
          .split(",")
          .map((t) => t.trim().slice(0, 30))
          .filter(Boolean)
          .slice(0, 5)
          .join(","),
      });
    }
    messages.push(a.message as ChatMessage, {
      role: "user",
      content: `That page cannot be used yet:\n${problems.map((p) => `- ${p.message}`).join("\n")}\n\nAnswer again with the whole corrected page, and nothing else.`,
    });
  }
  throw new HearthError("upstream_failed", `the model's page failed its checks twice: ${problems.map((p) => p.message).join("; ")}`, {
    retry: true,
    extra: { problems },
  });
}
