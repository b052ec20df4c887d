// /api/v1/<service>/<method>: the HTTP convention over dispatch.
import { dispatch, lookup } from "../dispatch.ts";
import { asHearthError, HearthError, invalid } from "../errors.ts";
import type { Runtime } from "../runtime.ts";
import { coerceQuery } from "../validate.ts";
import { bodyLimitOf, readText } from "./body.ts";
import { CORS_HEADERS, preflight } from "./cors.ts";
import { callerOf, challengeFor, headersFor, type ClientAddress } from "./identify.ts";
import { errorResponse, jsonResponse } from "./respond.ts";
import { partsOf } from "./url.ts";

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
    const result = await dispatch(rt, { service, method, args, caller, requestId, verb: verb === "HEAD" ? "GET" : verb, baseUrl: url.origin, entry, surface: "http" });
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
