// The Elysia app: the API route, plugin routes, health, and whatever pages modules mount.
import { Elysia } from "elysia";
import { asHearthError, HearthError } from "../errors.ts";
import type { RouteDef } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { assertScope, withinScope } from "../auth/tokens.ts";
import { finished, newCall } from "../call.ts";
import { handleApi } from "./api.ts";
import { largestBody, metered, readBody } from "./body.ts";
import { preflight } from "./cors.ts";
import { challengeFor, identify, stranger } from "./identify.ts";
import { errorResponse, jsonResponse } from "./respond.ts";

// Routes are added in loops from the registry, so the app is typed loosely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type App = Elysia<any, any, any, any, any, any, any>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type RouteArgs = { request: Request; params: Record<string, string>; server: { requestIP(r: Request): { address: string } | null } | null; [k: string]: any };

/** What a module that serves pages or extra routes adds to the app (sessions, MCP, ...). */
export type Mount = (app: App, rt: Runtime) => void;

/** Elysia's context type depends on the route; handlers here read only request, params and server. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const route = (fn: (c: RouteArgs) => unknown) => fn as (c: any) => unknown;

export const clientAddress = ({ request, server }: Pick<RouteArgs, "request" | "server">) => server?.requestIP(request)?.address ?? "";

/** A plugin route's POST body is held to the API's general limit: routes take small JSON or forms; uploads are methods. */
async function buffered(rt: Runtime, req: Request): Promise<Request> {
  const body = await readBody(rt, req, Number(rt.config.HEARTH_BODY_LIMIT));
  return new Request(req.url, { method: req.method, headers: req.headers, body: body.byteLength ? body : undefined });
}

export function createApp(rt: Runtime): App {
  const app: App = new Elysia();
  app.all("/api/v1/:service/:method", route((c) => handleApi(rt, c.request, c.params.service, c.params.method, clientAddress(c))), {
    parse: "none",
  });
  // Preflights for the rest of /api/v1 (the price list and what modules mount there).
  app.options("/api/v1/*", () => preflight("GET, POST, HEAD"));
  app.get("/health", () => jsonResponse(200, { result: { ok: true, services: rt.registry.services().length } }, crypto.randomUUID()));

  for (const p of rt.registry.plugins.values()) {
    for (const r of p.def.routes ?? []) {
      const handler = pluginRoute(rt, p.def.name, r);
      if (r.method === "GET") app.get(r.path, handler);
      else if (r.method === "POST") app.post(r.path, handler, { parse: "none" });
      else app.all(r.path, handler, { parse: "none" });
    }
  }
  for (const m of rt.wiring.mounts) m(app, rt);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  app.onError(({ code, request, error }: any) => {
    const rid = crypto.randomUUID();
    if (code === "NOT_FOUND") return errorResponse(new HearthError("not_found", `nothing at ${new URL(request.url).pathname}`), rid);
    rt.log.error("unhandled", { rid, error: String((error as Error)?.stack ?? error) });
    return errorResponse(error, rid);
  });
  return app;
}

/** Requests that change nothing; any other a route answered with success may have (a file moved on the drive, a link shared). */
const READS = new Set(["GET", "HEAD", "OPTIONS", "PROPFIND"]);

/**
 * One plugin route as the app serves it. A change it made for an account is
 * told to that person's open pages, as a method's is (core/views/live.ts), so
 * a folder made on a phone shows on the Files screen. On the sandbox origin (`sandboxed`)
 * the request stands for no one: it is not identified, so neither the
 * instance's session cookie (which browsers send to every port of its host)
 * nor a token counts there.
 */
export function pluginRoute(rt: Runtime, service: string, r: RouteDef, sandboxed = false) {
  return route(async (c) => {
    const rid = crypto.randomUUID();
    try {
      const identified = sandboxed ? stranger(clientAddress(c)) : await identify(rt, c.request, clientAddress(c));
      // A protocol route is the service itself, as its API methods are: a token scoped elsewhere is refused.
      if (r.method === "*" && (identified.via === "token" || identified.via === "session")) assertScope(identified, service);
      const caller = withinScope(identified, service);
      // A POST's body is read before its transaction starts: a slow sender must not hold the write lock.
      // Any other body (a WebDAV upload) is read by the route itself, counted in the instance's budget as it arrives:
      // whole, unless the route streams that verb's bodies to storage (then what is in memory at a time).
      const held = r.method === "POST" ? null : metered(rt, c.request, largestBody(rt), { streamed: r.streams?.includes(c.request.method) ?? false });
      const request = held ? held.request : await buffered(rt, c.request);
      const go = async () => {
        const call = newCall(caller, { id: rid });
        const ctx = rt.makeCtx(service, r.method === "POST" ? "write" : "read", call, r.path, new URL(request.url).origin, { sandboxed });
        const res = await r.run(request, Object.assign(ctx, { params: c.params }));
        if (call.pending) await finished(call);
        return res;
      };
      try {
        const res = await (r.method === "POST" ? rt.store.write(go) : go());
        if (caller.account && res.ok && !READS.has(request.method)) rt.changed?.({ account: caller.account.id, service, method: request.method.toLowerCase() });
        return res;
      } finally {
        held?.release();
      }
    } catch (e) {
      const err = asHearthError(e);
      if (err.kind === "internal") rt.log.error("route failed", { rid, path: r.path, error: String((e as Error)?.stack ?? e) });
      return errorResponse(e, rid, sandboxed ? undefined : challengeFor(rt, c.request, err));
    }
  });
}
