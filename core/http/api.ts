// /api/v1/<service>/<method>: the HTTP convention over dispatch.
import { dispatch, lookup } from "../dispatch.ts";
import { asHearthError, HearthError, invalid } from "../errors.ts";
import type { Runtime } from "../runtime.ts";
import { coerceQuery } from "../validate.ts";
import { bodyLimitOf, readText } from "./body.ts";
import { CORS_HEADERS, preflight } from "./cors.ts";
import { callerOf, challengeFor, headersFor, type ClientAddress } from "./identify.ts";
import { errorResponse, jsonResponse } from "./respond.ts";

async function readArgs(rt: Runtime, req: Request, limit: number): Promise<Record<string, unknown> | null> {
  const text = await readText(rt, req, limit);
  if (text.trim() === "") return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw invalid("body", `the body is not valid JSON: ${(e as Error).message}`);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw invalid("body", "the body must be a JSON object of arguments");
  return parsed as Record<string, unknown>;
}

/** The canonical origin of each "scheme://host" a request was addressed to: an instance is reached under a handful of names. */
const origins = new Map<string, string>();
function originOf(prefix: string): string {
  let origin = origins.get(prefix);
  if (origin === undefined) {
    origin = new URL(prefix).origin;
    if (origins.size >= 64) origins.clear();
    origins.set(prefix, origin);
  }
  return origin;
}

/**
 * A request's origin, and its query's text, without parsing the whole URL on
 * every call: the server's URLs are absolute, and the query's values read the
 * same from the raw text as from a parsed URL, which only percent-encodes
 * what reading its values decodes again (see coerceQuery).
 */
export function partsOf(url: string): { origin: string; query: string } {
  const from = url.indexOf("//") + 2;
  let end = from;
  while (end < url.length && url[end] !== "/" && url[end] !== "?" && url[end] !== "#") end++;
  const q = url.indexOf("?", end);
  const hash = url.indexOf("#", end);
  const query = q < 0 || (hash >= 0 && hash < q) ? "" : url.slice(q + 1, hash < 0 ? undefined : hash);
  return { origin: originOf(url.slice(0, end)), query };
}

/**
 * The id a client sent in X-Request-Id, for the log line beside the server's
 * own: a client may name its requests for its own tracing, but its names are
 * never the server's ids and never key anything the server keeps.
 */
export function clientTrace(req: Request): string | undefined {
  const given = req.headers.get("x-request-id");
  return given && /^[\w.-]{8,64}$/.test(given) ? given : undefined;
}

export async function handleApi(rt: Runtime, req: Request, service: string, method: string, address: ClientAddress): Promise<Response> {
  if (req.method === "OPTIONS") return preflight("GET, POST, HEAD");
  // With call lines going nowhere (HEARTH_LOG off), none is gathered: no timing, no client trace.
  const logs = rt.log.quiet !== true;
  const started = logs ? performance.now() : 0;
  const requestId = crypto.randomUUID();
  let status = 200;
  let callerId: string | null = null;
  try {
    const verb = req.method;
    if (verb !== "GET" && verb !== "POST" && verb !== "HEAD")
      throw new HearthError("method_not_allowed", `use GET for reads and POST for writes (got ${verb})`, { headers: { Allow: "GET, POST, HEAD, OPTIONS" } });
    const entry = lookup(rt, service, method);
    const url = partsOf(req.url);
    // Identifying mostly answers at once (a cached token): waiting on a value that is no promise still costs a turn.
    const found = callerOf(rt, req, address);
    const caller = found instanceof Promise ? await found : found;
    callerId = caller.account?.id ?? null;
    let args: Record<string, unknown>;
    if (verb === "POST") {
      const body = await readArgs(rt, req, bodyLimitOf(rt, entry));
      args = body ?? coerceQuery(entry, url.query);
    } else args = coerceQuery(entry, url.query);
    const result = await dispatch(rt, { service, method, args, caller, requestId, verb: verb === "HEAD" ? "GET" : verb, baseUrl: url.origin, entry });
    const more = headersFor(rt, caller);
    return jsonResponse(200, { result }, requestId, more ? { ...CORS_HEADERS, ...more } : CORS_HEADERS);
  } catch (e) {
    const err = asHearthError(e);
    const challenge = challengeFor(rt, req, err);
    const res = errorResponse(err, requestId, challenge ? { ...CORS_HEADERS, ...challenge } : CORS_HEADERS);
    status = res.status;
    // Failures of ours (500) and of the disk (storage_unavailable) need their cause in the log; refusals do not.
    if (status === 500 || err.kind === "storage_unavailable")
      rt.log.error("call failed", { rid: requestId, service, method, error: String((e as Error)?.stack ?? e) });
    return res;
  } finally {
    if (logs)
      rt.log.line({ rid: requestId, trace: clientTrace(req), service, method, status, ms: Math.round((performance.now() - started) * 100) / 100, caller: callerId });
  }
}
