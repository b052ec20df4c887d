// The person's side of the instance: a shell page for each screen a plugin
// declares, the bundles they run, the live stream of change notices, and the
// Markdown preview the editor shows. See docs/views.md.
import { findSession, requireCsrf, CSRF_HEADER } from "../auth/sessions.ts";
import { asHearthError, HearthError, invalid, unauthenticated } from "../errors.ts";
import { route, type App } from "../http/app.ts";
import { readText } from "../http/body.ts";
import { errorResponse, jsonResponse } from "../http/respond.ts";
import { defineModule } from "../module.ts";
import { renderMarkdown } from "../publish/markdown.ts";
import type { Runtime } from "../runtime.ts";
import { datesBundle, homeBundle, serveBundle, screenBundle, uiBundle } from "./bundle.ts";
import { findJson, searchPage } from "./find.ts";
import { icon, manifest, MANIFEST_PATH, offlinePage, worker, WORKER_PATH } from "./pwa.ts";
import { liveStream, tellPages } from "./live.ts";
import { findScreen, screensOf } from "./screens.ts";
import { shellPage } from "./shell.ts";

const PREVIEW_LIMIT = 1_000_000;

/** A JSON answer for the app's own routes, refusals in the API's shape. */
async function answered(fn: () => Promise<unknown>): Promise<Response> {
  const rid = crypto.randomUUID();
  try {
    return jsonResponse(200, { result: await fn() }, rid);
  } catch (e) {
    return errorResponse(asHearthError(e), rid);
  }
}

async function preview(rt: Runtime, req: Request): Promise<Response> {
  return answered(async () => {
    const s = await findSession(rt, req);
    if (!s) throw unauthenticated("sign in to preview");
    requireCsrf(s, req.headers.get(CSRF_HEADER));
    let text: unknown;
    try {
      text = (JSON.parse(await readText(rt, req, PREVIEW_LIMIT)) as { text?: unknown })?.text;
    } catch (e) {
      if (asHearthError(e).status === 413) throw e;
      throw invalid("text", 'send a JSON body: {"text": "..."}');
    }
    if (typeof text !== "string") throw invalid("text", "text must be a string of Markdown");
    return renderMarkdown(text);
  });
}

async function asset(rt: Runtime, req: Request, file: string): Promise<Response> {
  const notFound = () => errorResponse(new HearthError("not_found", `no asset ${file} (a page of an older build asks for it: reload)`), crypto.randomUUID());
  const m = /^([a-z][a-z0-9-]*)(?:\.([a-z][a-z0-9-]*))?\.([0-9a-f]{16})\.js$/.exec(file);
  if (!m) return notFound();
  const [, first, key, hash] = m;
  const screen = key === undefined ? null : findScreen(rt, first, key);
  const b = key === undefined ? (first === "ui" ? await uiBundle() : first === "home" ? await homeBundle() : first === "dates" ? datesBundle() : null) : screen ? await screenBundle(screen.id, screen.file!) : null;
  if (!b || !b.path.endsWith(`.${hash}.js`)) return notFound();
  return serveBundle(b, req);
}

function mountViews(app: App, rt: Runtime) {
  app.get("/my/assets/:file", route((c) => asset(rt, c.request, c.params.file)));
  app.get(
    "/my/live",
    route(async (c) => {
      const s = await findSession(rt, c.request);
      if (!s) return errorResponse(unauthenticated("sign in to hear changes"), crypto.randomUUID());
      return liveStream(rt, s.account.id);
    }),
  );
  app.post("/my/preview", route((c) => preview(rt, c.request)), { parse: "none" });
  app.get("/my/find", route((c) => findJson(rt, c.request)));
  app.get(MANIFEST_PATH, route(() => manifest(rt)));
  app.get(WORKER_PATH, route(() => worker()));
  app.get("/my/offline", route(() => offlinePage()));
  app.get(
    "/my/:file",
    route((c) => icon(c.params.file) ?? errorResponse(new HearthError("not_found", `nothing at ${new URL(c.request.url).pathname}`), crypto.randomUUID())),
  );
  app.get("/my/search", route((c) => searchPage(rt, c.request)));
  for (const screen of screensOf(rt)) {
    if (!screen.file) continue;
    app.get(screen.href, route((c) => shellPage(rt, c.request, screen)));
  }
}

export const viewsModule = defineModule({
  name: "views",
  provides: { mounts: [mountViews] },
  setup: tellPages,
});
