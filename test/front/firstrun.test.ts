// one store: the pages of the first hour; `hearth serve` on PostgreSQL runs in test/core/cli-binary.test.ts, accounts and tokens on both stores in test/auth
// The owner's first hour, as the README leads a new owner through it: a real
// `hearth serve` on a port written only in config/hearth.env, `hearth token
// create --user alice` spawned beside it, and Chromium following the link the
// command printed to choose a password, make the first-run choices the home
// page leads to (written to that same settings file), sign out and sign in
// again. Pages are
// checked with axe in light and dark at a phone's and a desktop's width, and
// left in test/artifacts/ to be looked at.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "node:util";
import type { Browser, Page } from "playwright-core";
import { createPasswordLink } from "../../core/auth/people.ts";
import { ensureAccount } from "../../core/auth/tokens.ts";
import { accountMenu, chromiumPresent, everyLook, launchChromium } from "../browser.ts";
import { startHearth, storeEnv, TestClock } from "../harness.ts";
import { freePort } from "../ports.ts";

const MAIN = join(import.meta.dir, "..", "..", "core", "cli", "main.ts");
const ARTIFACTS = join(import.meta.dir, "..", "artifacts");
const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 900 } };

const scratch = mkdtempSync(join(tmpdir(), "hearth-firstrun-"));
let browser: Browser | undefined;
beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  if (chromiumPresent) browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** The environment of an owner's shell: nothing says where the server is but the settings file. */
function ownerEnv(settings: string, stores: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  for (const k of ["PORT", "HOST", "HEARTH_URL", "HEARTH_PUBLIC_URL", "HEARTH_DATA", "HEARTH_TOKEN"]) delete env[k];
  return { ...env, ...stores, HEARTH_CONFIG: settings };
}

async function hearth(args: string[], env: Record<string, string>) {
  const p = Bun.spawn(["bun", MAIN, ...args], { env, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

/** A page's words as a person reads them: markup gone, spaces collapsed. */
async function pageText(address: string): Promise<string> {
  const text = await (await fetch(address, { headers: { accept: "text/html" } })).text();
  return text.replace(/<(style|script)[^]*?<\/\1>/g, "").replace(/<[^>]+>/g, "").replace(/\s+/g, " ");
}

/** Runs axe on the page as it is, in light and dark at both widths, leaving a screenshot of each. */
async function audit(page: Page, name: string): Promise<Record<string, unknown>> {
  // The audit's own script is injected, so this context alone sets the pages' script policy aside.
  const ctx = await browser!.newContext({ bypassCSP: true, viewport: WIDTHS.desktop });
  await ctx.addCookies(await page.context().cookies());
  const found = await everyLook(await ctx.newPage(), "", [{ name, path: page.url(), fullPage: true }], { shots: ARTIFACTS });
  await ctx.close();
  return found;
}

test.skipIf(!chromiumPresent)(
  "an admin made by token create gets a link to choose a password, on the port the settings file names, and signs in with it",
  async () => {
    const dir = join(scratch, "owner");
    mkdirSync(dir);
    const port = freePort();
    const settings = join(dir, "hearth.env");
    // The port is written here only: the server and the CLI find it in the same file.
    writeFileSync(settings, `PORT=${port}\nHEARTH_DATA=${join(dir, "data")}\nHEARTH_LOG=off\nHEARTH_COLLECTORS=off\nAI_OLLAMA_URL=\n`);
    const env = ownerEnv(settings, await storeEnv(join(dir, "data")));
    const url = `http://127.0.0.1:${port}`;

    // Bound to every address (HOST's default), start-up names each of the machine's, loopback first.
    const server = Bun.spawn(["bun", MAIN, "serve"], { env, stdout: "pipe", stderr: "ignore", stdin: "ignore" });
    let printed = "";
    const reading = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of server.stdout as ReadableStream<Uint8Array>) printed += decoder.decode(chunk);
    })();
    try {
      // However long a busy machine takes to start it: the runner's per-test limit still ends one that never does.
      while (!printed.includes("\nData in ")) {
        if (server.exitCode !== null) throw new Error(`hearth serve exited with ${server.exitCode}`);
        await Bun.sleep(100);
      }
      const lines = printed.split("\n");
      expect(lines[0]).toBe(`Hearth is running: open ${url}/signup to create the admin account`);
      const own = Object.values(networkInterfaces())
        .flat()
        .filter((a) => a && a.family === "IPv4" && !a.internal)
        .map((a) => `http://${a!.address}:${port}`);
      if (own.length) expect(lines[1]).toBe(`Also at ${own.join(", ")}`);

      const made = await hearth(["token", "create", "--user", "alice"], env);
      expect(made.code).toBe(0);
      // The token alone on stdout, for TOKEN=$(…); what was made and how to get in on stderr.
      expect(made.stdout).toMatch(/^hth_[\w-]{40,}\n$/);
      const token = made.stdout.trim();
      const said = made.stderr.trim();
      expect(said).toStartWith("made alice, the admin of this instance; alice has no password yet: to sign in on the web, open ");
      const link = said.match(/open (\S+) to choose one/)![1];
      expect(link).toStartWith(`${url}/password?code=`);

      // A method call from the CLI reaches the same server, on the same port.
      const note = await hearth(["notes", "add", "--title", "first", "--text", "from the shell"], { ...env, HEARTH_TOKEN: token });
      expect({ code: note.code, stderr: note.stderr }).toEqual({ code: 0, stderr: "" });
      expect(JSON.parse(note.stdout)).toMatchObject({ title: "first" });

      // Signing up is by invitation now, and nobody can sign in: both pages say how the owner gets in.
      for (const path of ["/signup", "/signin"]) {
        expect(await pageText(url + path)).toContain("At the server's shell, run hearth password --user alice --link and open the link it prints");
      }

      const page = await browser!.newPage({ viewport: WIDTHS.desktop });
      await page.goto(`${url}/signin`);
      expect(await audit(page, "signin-owner-way-in")).toEqual({});
      await page.goto(`${url}/signup`);
      expect(await audit(page, "signup-owner-way-in")).toEqual({});

      await page.goto(link);
      await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Choose a password");
      expect(await audit(page, "password-link")).toEqual({});
      // Too short: the form again with the reason, and the link still works.
      await page.getByLabel("New password").fill("short");
      await page.locator("#password").evaluate((e) => e.removeAttribute("minlength"));
      await page.getByRole("button", { name: "Set password and sign in" }).click();
      // Waited for as long as the page takes: a busy machine may take longer than one action's time to answer the form.
      await page.getByRole("alert").filter({ hasText: "at least 8 characters" }).waitFor();
      await page.getByLabel("New password").fill("alice's own passphrase");
      await page.getByRole("button", { name: "Set password and sign in" }).click();
      await page.waitForURL(`${url}/`);
      await expect(page.getByRole("navigation", { name: "Account" }).textContent()).resolves.toContain("Signed in as alice");

      // The home page leads the owner on to the first-run choices, which land in the same settings file, the port kept.
      await page.getByRole("link", { name: "choose its name, address, time zone and who may sign up" }).click();
      await page.waitForURL(`${url}/setup`);
      await page.getByLabel("Name of this instance").fill("Alice's hearth");
      await page.getByLabel("Public address").fill(url);
      await page.getByLabel("Time zone").fill("Europe/London");
      await page.getByLabel("By invitation").check();
      await page.getByRole("button", { name: "Save and finish" }).click();
      await page.waitForURL(`${url}/?setup=done`);
      expect(parseEnv(readFileSync(settings, "utf8"))).toMatchObject({ PORT: String(port), HEARTH_NAME: "Alice's hearth", HEARTH_PUBLIC_URL: url, HEARTH_TZ: "Europe/London", HEARTH_SIGNUP: "invite" });
      await page.goto(`${url}/`);
      await expect(page.getByRole("link", { name: "choose its name, address, time zone and who may sign up" }).count()).resolves.toBe(0);

      // The way in is no longer needed, so no longer shown.
      expect(await pageText(`${url}/signin`)).toContain("Sign in");
      expect(await pageText(`${url}/signin`)).not.toContain("hearth password");

      await (await accountMenu(page)).getByRole("button", { name: "Sign out" }).click();
      await page.waitForURL(`${url}/signin?out=1`);
      await page.getByLabel("Username").fill("alice");
      await page.getByLabel("Password").fill("alice's own passphrase");
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.waitForURL(`${url}/`);
      await expect(page.getByRole("navigation", { name: "Account" }).textContent()).resolves.toContain("Signed in as alice");

      // The link worked once.
      await page.goto(link);
      await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("This link does not work");
      await expect(page.getByRole("alert").textContent()).resolves.toContain("used already");
      expect(await audit(page, "password-link-used")).toEqual({});

      // A browser that opens an address with nothing there gets a page with a way home; a program gets JSON.
      const missing = await page.goto(`${url}/no/such/page`);
      expect(missing!.status()).toBe(404);
      expect(missing!.headers()["content-type"]).toStartWith("text/html");
      await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Page not found");
      await expect(page.getByRole("navigation", { name: "Account" }).textContent()).resolves.toContain("Signed in as alice");
      await page.getByRole("link", { name: "Go to the home page" }).click();
      await page.waitForURL(`${url}/`);
      await page.goto(`${url}/no/such/page`);
      expect(await audit(page, "not-found")).toEqual({});
      const json = await fetch(`${url}/no/such/page`, { headers: { accept: "application/json" } });
      expect(json.status).toBe(404);
      expect(await json.json()).toEqual({ error: { status: 404, kind: "not_found", message: "nothing at /no/such/page", retry: false } });
      // The API answers browsers in JSON too.
      const api = await fetch(`${url}/api/v1/nope/nothing`, { headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" } });
      expect(api.headers.get("content-type")).toStartWith("application/json");
      await page.close();

      // The admin at the shell prints a fresh link alone on stdout, to the same port.
      const reset = await hearth(["password", "--user", "alice", "--link"], env);
      expect(reset.code).toBe(0);
      expect(reset.stdout).toMatch(new RegExp(`^${url.replaceAll(".", "\\.")}/password\\?code=[\\w-]{43}\\n$`));
      expect(reset.stderr).toContain("works once, until ");
      const fresh = await fetch(reset.stdout.trim(), { headers: { accept: "text/html" } });
      expect(fresh.status).toBe(200);
      expect(await fresh.text()).toContain("<strong>alice</strong>");
    } finally {
      server.kill();
      await server.exited;
      await reading.catch(() => {});
    }
  },
);

test("a link past its day is refused with a page saying what to do, and a program is told which field", async () => {
  const clock = new TestClock(new Date("2026-11-21T10:00:00Z").getTime());
  const h = await startHearth({ clock });
  try {
    const account = await ensureAccount(h.rt.store, "owner", { admin: true });
    const late = await createPasswordLink(h.rt, account);
    clock.advance(25 * 3_600_000);
    const res = await fetch(`${h.url}/password?code=${late.code}`, { headers: { accept: "text/html" } });
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).toContain("This link does not work");
    expect(text).toContain("has expired");
    const posted = await fetch(`${h.url}/password`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ code: late.code, password: "a long passphrase" }) });
    expect(posted.status).toBe(400);
    expect((await posted.json()).error).toMatchObject({ kind: "invalid_argument", field: "code" });
    // Nothing was set: the account still has no password to sign in with.
    const signin = await fetch(`${h.url}/signin`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "owner", password: "a long passphrase" }) });
    expect(signin.status).toBe(401);

    // A newer link ends the one before it; the newer one works.
    const first = await createPasswordLink(h.rt, account);
    const second = await createPasswordLink(h.rt, account);
    const old = await fetch(`${h.url}/password`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ code: first.code, password: "a long passphrase" }) });
    expect(old.status).toBe(400);
    const ok = await fetch(`${h.url}/password`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ code: second.code, password: "a long passphrase" }) });
    expect(ok.status).toBe(200);
    expect((await ok.json()).result).toMatchObject({ username: "owner", admin: true });
  } finally {
    await h.stop();
  }
});
