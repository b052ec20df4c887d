// apps/test's second half: the page's literal hearth.call(...) calls made on
// the server as the caller, through the same dispatch a browser's would take.
import { asHearthError, type Ctx } from "hearth";
import type { ApiCall } from "./check.ts";

const MAX_CALLS = 20;
const MAX_RESULT_CHARS = 4000;

export interface CallReport {
  method: string;
  line: number;
  args: Record<string, unknown> | null;
  ran: boolean;
  /** false when the call (or its arguments) would be refused; absent when it could not be told. */
  ok?: boolean;
  status?: number;
  result?: unknown;
  error?: Record<string, unknown>;
  note?: string;
}

function clip(v: unknown): unknown {
  const text = JSON.stringify(v) ?? "null";
  return text.length <= MAX_RESULT_CHARS ? v : { truncated: true, preview: text.slice(0, MAX_RESULT_CHARS) };
}

export async function runCalls(ctx: Ctx, calls: ApiCall[]): Promise<CallReport[]> {
  const out: CallReport[] = [];
  for (const c of calls.slice(0, MAX_CALLS)) {
    const base = { method: c.method, line: c.line, args: c.args };
    const info = ctx.methods.get(c.method)!;
    if (c.args === null) {
      out.push({ ...base, ran: false, note: "the arguments are computed when the page runs, so only the method was checked" });
      continue;
    }
    if (info.kind === "write") {
      try {
        ctx.methods.validate(c.method, c.args);
        out.push({ ...base, ran: false, ok: true, note: "changes something, so its arguments were checked but it was not run" });
      } catch (e) {
        const err = asHearthError(e);
        out.push({ ...base, ran: false, ok: false, status: err.status, error: err.body(), note: "changes something, so it was not run; its arguments would be refused" });
      }
      continue;
    }
    const [service, method] = c.method.split("/");
    try {
      out.push({ ...base, ran: true, ok: true, status: 200, result: clip(await ctx.call(service, method, c.args)) });
    } catch (e) {
      const err = asHearthError(e);
      out.push({ ...base, ran: true, ok: false, status: err.status, error: err.body() });
    }
  }
  if (calls.length > MAX_CALLS) out.push({ method: "", line: 0, args: null, ran: false, note: `only the first ${MAX_CALLS} of ${calls.length} calls were tried` });
  return out;
}
