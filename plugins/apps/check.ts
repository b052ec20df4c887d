// What is wrong with an app's page, found without running it: HTML the parser
// had to repair, scripts that would not compile, sources the sandbox blocks,
// calls to methods that do not exist and elements scripts look for in vain.
import type { DefaultTreeAdapterMap } from "parse5";

export const MAX_HTML_BYTES = 256 * 1024;

export interface Finding {
  kind: "oversize" | "parse" | "external_script" | "script_syntax" | "unknown_method" | "blocked_source" | "missing_element" | "no_script";
  message: string;
  line?: number;
}

export interface ApiCall {
  method: string;
  /** The arguments when the page writes them literally; null when they are computed. */
  args: Record<string, unknown> | null;
  line: number;
}

export interface Inspection {
  bytes: number;
  /** Problems that stop the page working (a build retries on these). */
  problems: Finding[];
  /** Things worth knowing that may still work (an id created by a script, say). */
  warnings: Finding[];
  calls: ApiCall[];
  storeCalls: number;
}

type Node = DefaultTreeAdapterMap["node"];
type Element = DefaultTreeAdapterMap["element"];

const byteLength = (s: string) => new TextEncoder().encode(s).byteLength;
const lineAt = (text: string, index: number) => text.slice(0, index).split("\n").length;
const isElement = (n: Node): n is Element => "tagName" in n;

function* walk(n: Node): Generator<Element> {
  if (isElement(n)) yield n;
  const kids = "childNodes" in n ? n.childNodes : [];
  for (const k of kids) yield* walk(k as Node);
  if (isElement(n) && n.tagName === "template") yield* walk((n as unknown as { content: Node }).content);
}

const attr = (e: Element, name: string) => e.attrs.find((a) => a.name === name)?.value;
const text = (e: Element) => e.childNodes.map((c) => ("value" in c ? (c as { value: string }).value : "")).join("");

const SCRIPT_TYPES = new Set(["", "text/javascript", "application/javascript", "module", "text/ecmascript"]);
const transpiler = new Bun.Transpiler({ loader: "js" });

/** A call written as `hearth.call("service/method", {...})`; the arguments count only when they are a plain literal. */
const CALL = /hearth\.call\(\s*(["'`])([a-z][a-z0-9]*\/[a-z][a-z0-9_]*)\1\s*(?:,\s*(\{[^]*?\}))?\s*\)/g;
const STORE = /hearth\.store\.(get|set|remove|keys)\(/g;
const BY_ID = /getElementById\(\s*(["'])([^"'\\]+)\1\s*\)|querySelector(?:All)?\(\s*(["'])#([A-Za-z][\w-]*)\3\s*\)/g;

/** Reads a literal object as JSON, accepting the JavaScript spellings models and people use (bare keys, single quotes, trailing commas). */
export function literalArgs(src: string): Record<string, unknown> | null {
  const tries = [
    src,
    src
      .replace(/'((?:[^'\\]|\\.)*)'/g, (_m, s: string) => JSON.stringify(s.replace(/\\'/g, "'")))
      .replace(/([{,]\s*)([A-Za-z_$][\w$]*)\s*:/g, '$1"$2":')
      .replace(/,\s*([}\]])/g, "$1"),
  ];
  for (const t of tries) {
    try {
      const v = JSON.parse(t);
      if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {}
  }
  return null;
}

export function inspect(html: string, methodExists: (path: string) => boolean): Inspection {
  const problems: Finding[] = [];
  const warnings: Finding[] = [];
  const bytes = byteLength(html);
  if (bytes > MAX_HTML_BYTES) problems.push({ kind: "oversize", message: `the page is ${bytes} bytes; the cap is ${MAX_HTML_BYTES} (256 KB)` });

  const parseErrors: Finding[] = [];
  // parse5 loads on first use (a few MB an idle instance need not hold).
  const { parse } = require("parse5") as typeof import("parse5");
  const doc = parse(html, {
    sourceCodeLocationInfo: true,
    onParseError: (e) => parseErrors.push({ kind: "parse", message: `HTML parse error "${e.code}" at line ${e.startLine}, column ${e.startCol}`, line: e.startLine }),
  });
  problems.push(...parseErrors.slice(0, 20));
  if (parseErrors.length > 20) problems.push({ kind: "parse", message: `and ${parseErrors.length - 20} more HTML parse errors` });

  const ids = new Set<string>();
  const scripts: { code: string; line: number }[] = [];
  for (const e of walk(doc as unknown as Node)) {
    const id = attr(e, "id");
    if (id) ids.add(id);
    const line = e.sourceCodeLocation?.startLine ?? 0;
    if (e.tagName === "script") {
      const src = attr(e, "src");
      if (src !== undefined) {
        problems.push({ kind: "external_script", message: `<script src="${src}"> loads code from elsewhere; the sandbox runs only scripts written inside the page`, line });
        continue;
      }
      const type = (attr(e, "type") ?? "").trim().toLowerCase();
      if (!SCRIPT_TYPES.has(type)) continue;
      scripts.push({ code: text(e), line });
    } else if (e.tagName === "link" && /\bstylesheet\b/i.test(attr(e, "rel") ?? "") && attr(e, "href")) {
      warnings.push({ kind: "blocked_source", message: `<link rel="stylesheet" href="${attr(e, "href")}"> is blocked in the sandbox; put the CSS in a <style> element`, line });
    } else if ((e.tagName === "img" || e.tagName === "iframe" || e.tagName === "audio" || e.tagName === "video") && /^(https?:)?\/\//i.test(attr(e, "src") ?? "")) {
      warnings.push({ kind: "blocked_source", message: `<${e.tagName} src="${attr(e, "src")}"> is blocked in the sandbox; only data: and blob: sources load`, line });
    }
  }
  if (scripts.length === 0) warnings.push({ kind: "no_script", message: "the page has no script, so it cannot keep anything in its store" });

  const calls: ApiCall[] = [];
  let storeCalls = 0;
  const missing = new Set<string>();
  for (const s of scripts) {
    try {
      transpiler.transformSync(s.code);
    } catch (e) {
      const msg = String((e as Error)?.message ?? e).split("\n")[0];
      problems.push({ kind: "script_syntax", message: `the script at line ${s.line} does not compile: ${msg}`, line: s.line });
    }
    for (const m of s.code.matchAll(CALL)) {
      const line = s.line + lineAt(s.code, m.index) - 1;
      if (!methodExists(m[2])) problems.push({ kind: "unknown_method", message: `hearth.call("${m[2]}") names no method of this instance`, line });
      else calls.push({ method: m[2], args: m[3] === undefined ? {} : literalArgs(m[3]), line });
    }
    storeCalls += [...s.code.matchAll(STORE)].length;
    for (const m of s.code.matchAll(BY_ID)) missing.add(m[2] ?? m[4]);
  }
  for (const id of missing)
    if (!ids.has(id)) warnings.push({ kind: "missing_element", message: `a script looks up the element #${id}, which the page does not contain (fine if a script creates it first)` });
  return { bytes, problems, warnings, calls, storeCalls };
}
