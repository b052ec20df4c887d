// Requests to an OpenAI-compatible server: a timeout, one retry on a
// transient failure (unreachable, 500/502/503/504, a body that is not the
// API's JSON), and every failure mapped to DESIGN.md's upstream_* kinds with
// the provider's own message, since "HTTP 400" alone helps no one fix a model
// name or a key.
import { HearthError, upstream } from "../errors.ts";
import { scrub } from "../upstream/redact.ts";
import { readCapped } from "../upstream/wire.ts";

export interface Endpoint {
  /** Base URL with its /v1, no trailing slash. */
  base: string;
  key: string;
  /** Host shown in messages and usage rows (never the key). */
  label: string;
}

export interface PostOptions {
  timeoutMs: number;
  retryDelayMs: number;
  signal?: AbortSignal;
  /** Largest body read, in bytes. */
  maxBytes?: number;
}

/** A failure worth one more try; carries the error to report if the retry fails too. */
export class Transient extends Error {
  constructor(readonly error: HearthError) {
    super(error.message);
  }
}

const transientStatus = new Set([500, 502, 503, 504]);

export function headersFor(ep: Endpoint, accept = "application/json"): Record<string, string> {
  const h: Record<string, string> = { "content-type": "application/json", accept };
  if (ep.key) h.authorization = `Bearer ${ep.key}`;
  return h;
}

/**
 * What the provider said was wrong: OpenAI's {"error": {"message"}}, Ollama's
 * {"error": "..."}, or the start of the text; with the endpoint's address and
 * key cut out, should the provider quote them.
 */
export function providerMessage(text: string, secrets: readonly string[] = []): string {
  try {
    const j = JSON.parse(text);
    const m = typeof j?.error === "string" ? j.error : (j?.error?.message ?? j?.message ?? j?.detail);
    if (typeof m === "string" && m.trim()) return scrub(m.trim().slice(0, 300), secrets);
  } catch {}
  return scrub(text.trim().slice(0, 200), secrets);
}

/** The error member of an answer that carries one, as words for a message. */
export function errorWords(ep: Endpoint, error: unknown): string {
  const m = typeof error === "string" ? error : (error as { message?: unknown })?.message;
  return typeof m === "string" && m.trim() ? scrub(m.trim().slice(0, 300), [ep.base, ep.key]) : "unknown";
}

/** Maps a refusal status to the error a caller sees, naming the setting that most likely needs changing. */
export function statusError(ep: Endpoint, status: number, text: string, model: string, headers: Headers): HearthError | Transient {
  const said = providerMessage(text, [ep.base, ep.key]);
  const tail = said ? `: ${said}` : "";
  if (status === 401 || status === 403) return upstream("upstream_failed", `the AI provider at ${ep.label} refused the key (HTTP ${status})${tail}; check AI_API_KEY`);
  if (status === 404) return upstream("upstream_failed", `the AI provider at ${ep.label} has no such model or endpoint (HTTP 404, model "${model}")${tail}; check AI_MODEL and AI_BASE_URL`);
  if (status === 429) {
    const after = headers.get("retry-after");
    return new HearthError("upstream_unavailable", `the AI provider at ${ep.label} is limiting requests from this instance (HTTP 429)${tail}`, {
      retry: true,
      headers: after && /^\d+$/.test(after) ? { "Retry-After": after } : undefined,
    });
  }
  const err = upstream(status === 503 ? "upstream_unavailable" : "upstream_failed", `the AI provider at ${ep.label} answered HTTP ${status}${tail}`);
  return transientStatus.has(status) ? new Transient(err) : err;
}

/** Runs attempt, and once more after a pause when it fails transiently. */
export async function withRetry<T>(opts: PostOptions, attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt();
  } catch (e) {
    if (!(e instanceof Transient)) throw e;
    if (opts.signal?.aborted) throw e.error;
    await new Promise((r) => setTimeout(r, opts.retryDelayMs));
    try {
      return await attempt();
    } catch (again) {
      throw again instanceof Transient ? again.error : again;
    }
  }
}

/**
 * One POST of JSON, answered with JSON. Whatever is thrown is a HearthError
 * or a Transient (the caller retries those with withRetry).
 */
export async function postJson(ep: Endpoint, path: string, body: unknown, model: string, opts: PostOptions): Promise<any> {
  const { res, done } = await open(ep, path, body, model, opts, "application/json");
  try {
    let text: string;
    try {
      text = await readCapped(res, opts.maxBytes ?? 50_000_000, `the AI provider at ${ep.label}`);
    } catch (e) {
      if (e instanceof HearthError) throw e;
      throw done.timedOut() ? late(ep, opts) : new Transient(upstream("upstream_failed", `the AI provider at ${ep.label} broke off its answer`));
    }
    try {
      return JSON.parse(text);
    } catch {
      throw new Transient(upstream("upstream_failed", `the AI provider at ${ep.label} sent an answer that is not JSON`));
    }
  } finally {
    done.clear();
  }
}

/** The timer and abort wiring of one request; `touch` restarts the timer (streams wait per chunk). */
export interface Timer {
  signal: AbortSignal;
  timedOut(): boolean;
  touch(): void;
  clear(): void;
}

export function timer(timeoutMs: number, outer?: AbortSignal): Timer {
  const abort = new AbortController();
  let timedOut = false;
  let t: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    if (t) clearTimeout(t);
    t = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, timeoutMs);
  };
  const onOuter = () => abort.abort();
  outer?.addEventListener("abort", onOuter, { once: true });
  arm();
  return {
    signal: abort.signal,
    timedOut: () => timedOut,
    touch: arm,
    clear: () => {
      if (t) clearTimeout(t);
      outer?.removeEventListener("abort", onOuter);
    },
  };
}

export const late = (ep: Endpoint, opts: PostOptions) =>
  upstream("upstream_timeout", `the AI provider at ${ep.label} did not answer within ${(opts.timeoutMs / 1000).toFixed(1)} s (AI_TIMEOUT_MS)`);

/** Sends the request and checks the status; the caller reads the body and calls done.clear(). */
export async function open(ep: Endpoint, path: string, body: unknown, model: string, opts: PostOptions, accept: string): Promise<{ res: Response; done: Timer }> {
  const done = timer(opts.timeoutMs, opts.signal);
  let res: Response;
  try {
    res = await fetch(ep.base + path, { method: "POST", headers: headersFor(ep, accept), body: JSON.stringify(body), signal: done.signal });
  } catch {
    done.clear();
    if (done.timedOut()) throw late(ep, opts);
    if (opts.signal?.aborted) throw upstream("upstream_failed", `the request to the AI provider at ${ep.label} was cancelled`);
    throw new Transient(upstream("upstream_unavailable", `the AI provider at ${ep.label} could not be reached`));
  }
  if (res.status < 200 || res.status >= 300) {
    let text = "";
    try {
      text = await readCapped(res, 100_000, `the AI provider at ${ep.label}`);
    } catch {}
    done.clear();
    throw statusError(ep, res.status, text, model, res.headers);
  }
  return { res, done };
}

