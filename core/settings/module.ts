// The admin's pages: /settings (every setting, saved to the settings file)
// /people (the accounts of the instance) and /setup (the first run).
import { route, type App } from "../http/app.ts";
import { defineModule } from "../module.ts";
import type { Runtime } from "../runtime.ts";
import { peopleMigrations } from "./migrations.ts";
import { settingsGet, settingsPost } from "./page.ts";
import { peopleGet, peoplePost } from "./peoplepage.ts";
import { restoreGet, restorePost } from "./restore.ts";
import { restoreScript } from "./restorescript.ts";
import { setupGet, setupPost } from "./setup.ts";

function mountPages(app: App, rt: Runtime) {
  const noParse = { parse: "none" as const };
  app.get("/settings", route((c) => settingsGet(rt, c.request)));
  app.post("/settings", route((c) => settingsPost(rt, c.request)), noParse);
  app.get("/settings/restore", route((c) => restoreGet(rt, c.request)));
  app.post("/settings/restore", route((c) => restorePost(rt, c.request)), noParse);
  app.get("/settings/restore.js", route(() => restoreScript()));
  app.get("/setup", route((c) => setupGet(rt, c.request)));
  app.post("/setup", route((c) => setupPost(rt, c.request)), noParse);
  app.get("/people", route((c) => peopleGet(rt, c.request)));
  app.post("/people", route((c) => peoplePost(rt, c.request)), noParse);
}

export const settingsModule = defineModule({
  name: "settings",
  provides: { mounts: [mountPages], migrations: { people: peopleMigrations } },
});
