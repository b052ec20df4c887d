// The pages a person meets first and the documents programs read: the home
// page, the services list with its forms, the OpenAPI document and its
// reference, and the instance's status. All of it is derived from the registry.
import { openapiDocument } from "../../openapi/document.ts";
import type { Runtime } from "../../runtime.ts";
import { defineModule } from "../../module.ts";
import { clientAddress, route, type App } from "../app.ts";
import { favicon, FAVICON_PATHS } from "./favicon.ts";
import { homePage, homePlacePost } from "./home.ts";
import { healthCommand } from "./healthcheck.ts";
import { homeMigrations } from "./home/migrations.ts";
import { referenceAssets, referencePage } from "./reference.ts";
import { servicesPage, servicesTry } from "./services.ts";
import { statusPage } from "./status.ts";

// The registry and prices are fixed once the instance runs, so the document is built once per address it is reached at.
const documents = new WeakMap<Runtime, Map<string, string>>();
function openapiText(rt: Runtime, base: string): string {
  let byBase = documents.get(rt);
  if (!byBase) documents.set(rt, (byBase = new Map()));
  let text = byBase.get(base);
  if (text === undefined) {
    // Host headers are the client's to choose: a few addresses are kept, not one per header sent.
    if (byBase.size >= 8) byBase.clear();
    byBase.set(base, (text = JSON.stringify(openapiDocument(rt, base))));
  }
  return text;
}

function mountPages(app: App, rt: Runtime) {
  const noParse = { parse: "none" as const };
  app.get("/", route((c) => homePage(rt, c.request)));
  app.post("/home/place", route((c) => homePlacePost(rt, c.request)), noParse);
  app.get("/services", route((c) => servicesPage(rt, c.request)));
  app.post("/services", route((c) => servicesTry(rt, c.request, clientAddress(c))), noParse);
  app.get(
    "/openapi.json",
    route((c) => {
      const base = (rt.config.HEARTH_PUBLIC_URL || new URL(c.request.url).origin).replace(/\/+$/, "");
      return new Response(openapiText(rt, base), {
        headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-cache", "access-control-allow-origin": "*" },
      });
    }),
  );
  app.get("/reference", route((c) => referencePage(rt, c.request)));
  for (const [path, serve] of Object.entries(referenceAssets)) app.get(path, route(() => serve()));
  app.get("/status", route((c) => statusPage(rt, c.request)));
  for (const path of FAVICON_PATHS) app.get(path, route(() => favicon()));
}

export const frontModule = defineModule({
  name: "front",
  provides: { mounts: [mountPages], migrations: { home: homeMigrations }, cli: { health: healthCommand } },
});
