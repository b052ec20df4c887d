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
    info: (msg, data) => emit("info", { msg, ...data }),
    warn: (msg, data) => emit("warn", { msg, ...data }),
    error: (msg, data) => emit("error", { msg, ...data }),
    line: (data) => emit("info", data),
    quiet: min > levels.info,
  };
}
