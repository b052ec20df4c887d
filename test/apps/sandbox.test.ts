// one store: which origin serves app pages, as the settings decide; apps' store, permissions and priced opens run on both stores in test/apps (apps, hosting)
// Where app pages are served, as the settings decide: on a default install
// the instance's sandbox port (an origin of their own, reading no cookie);
// behind a proxy, unless the owner names a way, the instance's own origin in
// an opaque sandbox, which /status and `hearth help` say, naming APPS_HOST;
// APPS_HOST, a name of their own, wherever it is set.
import { afterAll, beforeAll, expect, test } from "bun:test";
import net from "node:net";
import { join } from "node:path";
import { welcomeLines } from "../../core/cli/welcome.ts";
import { listen } from "../../core/http/serve.ts";
import { Registry } from "../../core/registry.ts";
import { definePlugin, read } from "../../core/plugin.ts";
import { Type as T } from "@sinclair/typebox";
import { startHearth, type Hearth } from "../harness.ts";

let h: Hearth;
let owner: string;
const PAGE = "<!doctype html><p>mine</p>";

beforeAll(async () => {
  h = await startHearth({ env: { HEARTH_SIGNUP: "open" } });
  owner = await h.token("olive");
  await h.call("apps/create", { name: "Dear", html: PAGE, price: 5 }, { token: owner });
});
afterAll(() => h?.stop());

const hostPage = async (base: string, slug: string, headers: Record<string, string> = {}) => {
  const r = await fetch(`${base}/apps/${slug}`, { headers });
  const text = await r.text();
  return { csp: r.headers.get("content-security-policy") ?? "", sandbox: text.match(/<iframe id="app-frame"[^>]*sandbox="([^"]*)"/)?.[1], frame: JSON.parse(text.match(/<script type="application\/json" id="app-data">(.*?)<\/script>/)![1]).frame as string };
};
const statusOf = async (base: string) => {
  const r = (await (await fetch(`${base}/status`, { headers: { accept: "application/json" } })).json()) as any;
  return r.result.integrations.find((i: { name: string }) => i.name === "sandbox");
};
async function help(env: Record<string, string>) {
  const p = Bun.spawn(["bun", join(import.meta.dir, "../../core/cli/main.ts"), "help", "apps"], { env: { ...process.env, HEARTH_LOG: "off", HEARTH_CONFIG: "/dev/null", ...env }, stdout: "pipe", stderr: "pipe" });
  const [out] = await Promise.all([new Response(p.stdout).text(), p.exited]);
  return out;
}

test("a default install frames apps from its sandbox port, which counts no session cookie and sets none", async () => {
  expect(h.sandboxUrl).not.toBeNull();
  const page = await hostPage(h.url, "dear");
  expect(page.sandbox).toBe("allow-scripts allow-same-origin");
  expect(page.frame).toBe(`${h.sandboxUrl}/apps/dear/frame`);
  expect(page.csp).toContain(`frame-src ${h.sandboxUrl};`);

  // A browser sends the instance's session cookie to every port of its host: on the sandbox port it stands for no one.
  const s = await fetch(`${h.url}/signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "sam", password: "a long passphrase" }) });
  const cookie = s.headers.get("set-cookie")!.split(";")[0];
  expect(s.headers.get("set-cookie")).toContain("HttpOnly");
  const sams = await h.token("sam");
  expect((await h.call("apps/create", { name: "Sams", html: PAGE, price: 5 }, { token: sams })).status).toBe(200);
  // Its creator opens it free with their session on the instance's port...
  expect((await fetch(`${h.url}/apps/sams/frame`, { headers: { cookie } })).status).toBe(200);
  // ...and is no one on the sandbox port, where only a paid open's ticket counts.
  const there = await fetch(`${h.sandboxUrl}/apps/sams/frame`, { headers: { cookie } });
  expect(there.status).toBe(402);
  expect(there.headers.get("set-cookie")).toBeNull();
  const free = await fetch(`${h.sandboxUrl}/apps/counter/frame`, { headers: { cookie } });
  expect(free.status).toBe(200);
  expect(free.headers.get("set-cookie")).toBeNull();

  const status = await statusOf(h.url);
  expect(status).toMatchObject({ configured: true });
  expect(status.note).toContain(`port ${new URL(h.sandboxUrl!).port}`);
  expect(await help({})).not.toContain("note:");
  // Start-up prints where they are served.
  expect((await welcomeLines(h.rt, h.url, { file: "hearth.env", read: false })).join("\n")).toContain(`in an origin of their own, at ${h.sandboxUrl} (HEARTH_SANDBOX_PORT)`);
});

test("behind a proxy with no APPS_HOST, frames stay opaque on the instance's origin, and /status and hearth help say APPS_HOST closes it", async () => {
  const proxied = await startHearth({ env: { HEARTH_PUBLIC_URL: "https://hearth.example" } });
  try {
    const page = await hostPage(proxied.url, "counter");
    expect(page.sandbox).toBe("allow-scripts");
    expect(page.frame).toBe("/apps/counter/frame");
    expect(page.csp).toContain("frame-src 'self'");
    const status = await statusOf(proxied.url);
    expect(status.configured).toBe(false);
    expect(status.note).toContain("HEARTH_PUBLIC_URL");
    expect(status.note).toContain("set APPS_HOST (apps)");
    const said = await help({ HEARTH_PUBLIC_URL: "https://hearth.example" });
    expect(said).toContain("note: behind HEARTH_PUBLIC_URL");
    expect(said).toContain("set APPS_HOST (apps)");
  } finally {
    await proxied.stop();
  }
  // Behind the same proxy with APPS_HOST set, app pages have their name, and nothing is left to say.
  const named = await startHearth({ env: { HEARTH_PUBLIC_URL: "https://hearth.example", APPS_HOST: "apps.hearth.example", HEARTH_ALLOWED_HOSTS: "apps.hearth.example" } });
  try {
    const page = await hostPage(named.url, "counter");
    expect(page.sandbox).toBe("allow-scripts allow-same-origin");
    expect(page.frame).toBe("https://apps.hearth.example/apps/counter/frame");
    expect(await statusOf(named.url)).toMatchObject({ configured: true, note: "APPS_HOST" });
    expect(await help({ HEARTH_PUBLIC_URL: "https://hearth.example", APPS_HOST: "apps.hearth.example" })).not.toContain("note:");
    // The apps name answers app documents only.
    const frame = await fetch(`${named.url}/apps/counter/frame`, { headers: { host: "apps.hearth.example" } });
    expect(frame.headers.get("content-security-policy")).toContain("frame-ancestors https://hearth.example");
    expect((await fetch(`${named.url}/apps/counter`, { headers: { host: "apps.hearth.example" } })).status).toBe(404);
  } finally {
    await named.stop();
  }
});

test("HEARTH_SANDBOX_PORT off serves app pages in an opaque sandbox on the instance's origin, and says so", async () => {
  const off = await startHearth({ env: { HEARTH_SANDBOX_PORT: "off" } });
  try {
    expect(off.sandboxUrl).toBeNull();
    const page = await hostPage(off.url, "counter");
    expect(page.sandbox).toBe("allow-scripts");
    expect(page.frame).toBe("/apps/counter/frame");
    const status = await statusOf(off.url);
    expect(status.configured).toBe(false);
    expect(status.note).toContain("HEARTH_SANDBOX_PORT is off");
  } finally {
    await off.stop();
  }
});

test("a sandbox port the owner named that is taken stops start-up; PORT+1 taken leaves app pages on the instance's origin", async () => {
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", () => resolve()));
  const port = (taken.address() as net.AddressInfo).port;
  try {
    let failed: unknown;
    try {
      const s = await startHearth({ env: { HEARTH_SANDBOX_PORT: String(port) } });
      await s.stop();
    } catch (e) {
      failed = e;
    }
    expect(String(failed)).toContain(`HEARTH_SANDBOX_PORT: cannot listen on 127.0.0.1:${port}`);
    expect(String(failed)).not.toContain("at ");

    // The main port just below the taken one (tried a few times: another process may hold it).
    const warned: string[] = [];
    const rt = h.rt;
    const warn = rt.log.warn;
    rt.log.warn = (msg: string) => void warned.push(msg);
    try {
      let done = false;
      for (let below = port - 1; !done && below > port - 20; below--) {
        let second: ReturnType<typeof listen>;
        try {
          second = listen(rt, { port: below, hostname: "127.0.0.1" });
        } catch {
          continue;
        }
        expect(second.sandboxUrl).toBeNull();
        await second.stop();
        done = true;
      }
      expect(done).toBe(true);
      expect(warned.some((m) => m.includes("sandbox port could not be bound"))).toBe(true);
    } finally {
      rt.log.warn = warn;
    }
  } finally {
    taken.close();
  }
});

test("a sandbox route is a GET of a plugin that needs sandbox", () => {
  const m = read({ description: "d", args: T.Object({}), access: "public", run: () => 1 });
  const route = { method: "GET", path: "/x/doc", sandbox: true, run: () => new Response("") };
  const cases: [Record<string, unknown>, string][] = [
    [{ routes: [route] }, "needs"],
    [{ needs: ["sandbox"], routes: [{ ...route, method: "POST" }] }, "routes[0].sandbox"],
    [{ needs: ["sandbox"], routes: [{ ...route, sandbox: "yes" }] }, "routes[0].sandbox"],
    [{ needs: ["sandbox"], sandboxHost: "NOT_MINE", routes: [route] }, "sandboxHost"],
  ];
  for (const [extra, field] of cases) {
    let caught: any;
    try {
      new Registry().add({ name: "x", description: "d", methods: { m }, ...extra } as never, "plugins/x/index.ts", { builtin: false, migrations: null });
    } catch (e) {
      caught = e;
    }
    expect(caught?.field).toBe(field);
  }
  new Registry().add(definePlugin({ name: "x", description: "d", needs: ["sandbox"], config: { X_HOST: { default: "", description: "d" } }, sandboxHost: "X_HOST", methods: { m }, routes: [route as never] }), "plugins/x/index.ts", { builtin: false, migrations: null });
});
