// one store: the owner's account commands; accounts, passwords, invitations and the sessions a new password ends run on both stores in test/auth (accounts, twofactor, sessions)
// The owner's account commands, run as real processes against a data folder,
// then checked through the web: the password signs in, the invitation signs up,
// and a changed password signs the account out of every browser.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHearth, storeEnv } from "../harness.ts";
import { get, post } from "./people.ts";

const main = join(import.meta.dir, "../../core/cli/main.ts");
const dir = mkdtempSync(join(tmpdir(), "hearth-auth-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// The commands and the instance started after them open the same database.
const stores = await storeEnv();

async function run(args: string[], stdin = "") {
  const p = Bun.spawn(["bun", main, ...args], {
    env: { ...process.env, ...stores, HEARTH_DATA: dir, HEARTH_LOG: "off", HEARTH_URL: "http://hearth.test" },
    stdin: new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout: stdout.trim(), stderr: stderr.trim(), code };
}

test("invite before any admin says how the first account is made", async () => {
  const r = await run(["invite"]);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("first person to sign up");
});

test("password from stdin lets a CLI-made admin sign in on the web; invite makes a working link", async () => {
  const short = await run(["password", "--user", "owner"], "short\n");
  expect(short.code).toBe(1);
  expect(short.stderr).toContain("at least 8");
  const set = await run(["password", "--user", "owner", "--admin"], "the owner's passphrase\n");
  expect(set.code).toBe(0);
  expect(set.stdout).toBe("password set for owner (admin)");
  const inv = await run(["invite"]);
  expect(inv.code).toBe(0);
  expect(inv.stdout).toMatch(/^http:\/\/hearth\.test\/signup\?invite=[\w-]{43}$/);
  const code = new URL(inv.stdout).searchParams.get("invite");

  const h = await startHearth({ dataDir: dir, env: stores });
  try {
    const signed = await post(h, "/signin", { username: "owner", password: "the owner's passphrase" });
    expect(signed.status).toBe(200);
    expect(signed.body.result).toMatchObject({ username: "owner", admin: true });
    const joined = await post(h, "/signup", { username: "friend", password: "a friend's passphrase", invite: code });
    expect(joined.status).toBe(200);
    expect(joined.body.result.admin).toBe(false);
  } finally {
    await h.stop();
  }
});

test("a changed password ends every session of that account at once, and no one else's", async () => {
  expect((await run(["password", "--user", "dana"], "dana's first passphrase\n")).code).toBe(0);
  const h = await startHearth({ dataDir: dir, env: { ...stores, HEARTH_SIGNUP: "open" } });
  try {
    const signIn = async (username: string, password: string) => {
      const r = await post(h, "/signin", { username, password });
      expect(r.status).toBe(200);
      return r.headers.get("set-cookie")!.split(";")[0];
    };
    const phone = await signIn("dana", "dana's first passphrase");
    const laptop = await signIn("dana", "dana's first passphrase");
    const other = await post(h, "/signup", { username: "carol", password: "carol's passphrase" });
    const carol = other.headers.get("set-cookie")!.split(";")[0];
    for (const cookie of [phone, laptop, carol]) expect((await get(h, "/session", { cookie })).status).toBe(200);

    const changed = await run(["password", "--user", "dana"], "a brand new passphrase\n");
    expect(changed.code).toBe(0);
    expect(changed.stdout.split("\n")[1]).toBe("signed out of 2 browser sessions: sign in again with the new password");
    // The running instance sees it on the next request: both browsers are nobody now.
    for (const cookie of [phone, laptop]) {
      expect((await get(h, "/session", { cookie })).status).toBe(401);
      expect((await h.call("notes/list", {}, { headers: { cookie } })).status).toBe(401);
    }
    expect((await get(h, "/session", { cookie: carol })).status).toBe(200);
    expect((await post(h, "/signin", { username: "dana", password: "dana's first passphrase" })).status).toBe(401);
    await signIn("dana", "a brand new passphrase");
  } finally {
    await h.stop();
  }
});
