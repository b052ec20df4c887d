// Structured logs: one JSON line each, buffered so logging never dominates a request.
import type { Logger } from "./plugin.ts";

const levels = { info: 0, warn: 1, error: 2, off: 3 } as const;
type Level = keyof typeof levels;

/**
 * A logger that also takes one line per call. `quiet` is true when those
 * lines go nowhere (HEARTH_LOG above info), so the call path need not gather
 * them; a logger without it takes every line.
 */
export type CallLogger = Logger & { line(data: Record<string, unknown>): void; readonly quiet?: boolean };

const FRAME = /^\s+at /;

/**
 * A failed query's error, as the ORM words it, carries the query's
 * parameters ("Failed query: …\nparams: …"): a token's hash, a note's text,
 * an address. The log keeps the query and the stack, never the values.
 */
export function withoutParams(text: string): string {
  const at = text.indexOf("\nparams: ");
  if (at < 0) return text;
  // The values run to the stack's frames (a value may hold line breaks of its own), or to the end.
  const rest = text.slice(at + 1).split("\n");
  let end = rest.length;
  while (end > 1 && FRAME.test(rest[end - 1])) end--;
  return `${text.slice(0, at)}\nparams: (not logged)${end < rest.length ? `\n${rest.slice(end).join("\n")}` : ""}`;
}

function scrubbed(data: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!data) return data;
  let out = data;
  for (const k in data) {
    const v = data[k];
    if (typeof v === "string" && v.includes("\nparams: ")) {
      if (out === data) out = { ...data };
      out[k] = withoutParams(v);
    }
  }
  return out;
}

export function makeLogger(level: string, out: { write(s: string): unknown } = process.stderr): CallLogger {
  const min = levels[(level as Level) in levels ? (level as Level) : "info"];
  let buf: string[] = [];
  let timer: Timer | null = null;
  const flush = () => {
    timer = null;
    if (buf.length) {
      out.write(buf.join(""));
      buf = [];
    }
  };
  const emit = (lvl: Level, data: Record<string, unknown>) => {
    if (levels[lvl] < min) return;
    buf.push(JSON.stringify({ t: new Date().toISOString(), level: lvl, ...data }) + "\n");
    if (buf.length > 256) flush();
    else if (!timer) timer = setTimeout(flush, 50);
  };
  process.once("exit", flush);
  return {
    info: (msg, data) => emit("info", { msg, ...scrubbed(data) }),
    warn: (msg, data) => emit("warn", { msg, ...scrubbed(data) }),
    error: (msg, data) => emit("error", { msg, ...scrubbed(data) }),
    line: (data) => emit("info", data),
    quiet: min > levels.info,
  };
}
