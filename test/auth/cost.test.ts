// one store: what a password's hash or a backup passphrase's stretching costs is decided before the store is reached; sign-up and sign-in run on both stores in test/auth/accounts.test.ts, backups in test/backup
// HEARTH_PASSWORD_COST: standard hashes at Bun's default argon2id cost, test
// at the least it allows (the suite's own instances use it); a hash keeps
// its cost, so one made at either is signed in with whatever the setting is
// now; a value it does not know refuses a sign-up by name, hashing nothing.
// A backup's passphrase is stretched by scrypt at age's own cost, or at test
// next to nothing; the file says which, so it opens under either setting.
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SCRYPT_WORK_FACTOR, seal, sealingOf, unseal } from "../../core/backup/crypt.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { post, signIn, signUp } from "./people.ts";

let h: Hearth | null = null;
afterEach(async () => {
  await h?.stop();
  h = null;
});

const hashOf = async (hh: Hearth, username: string) => (await hh.row<{ password: string }>("SELECT password FROM accounts WHERE username = ?", username))!.password;

test("standard hashes at 64 MiB and two passes, test at the least; each hash signs in whatever the setting is after", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hearth-cost-"));
  try {
    await costs(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

async function costs(dir: string) {
  h = await startHearth({ dataDir: dir, env: { HEARTH_SIGNUP: "open", HEARTH_PASSWORD_COST: "standard" } });
  await signUp(h, "alice");
  expect(await hashOf(h, "alice")).toStartWith("$argon2id$v=19$m=65536,t=2,p=1$");
  const env = h.env;
  await h.stop();
  h = await startHearth({ dataDir: dir, env: { ...env, HEARTH_SIGNUP: "open", HEARTH_PASSWORD_COST: "test" } });
  await signUp(h, "bob");
  expect(await hashOf(h, "bob")).toStartWith("$argon2id$v=19$m=8,t=1,p=1$");
  // Made at the standard cost, signed into at the test one.
  await signIn(h, "alice");
  await h.stop();
  h = await startHearth({ dataDir: dir, env: { ...env, HEARTH_SIGNUP: "open", HEARTH_PASSWORD_COST: "standard" } });
  await signIn(h, "bob");
}

test("a value it does not know refuses the sign-up, naming the setting, and makes no account", async () => {
  h = await startHearth({ env: { HEARTH_SIGNUP: "open", HEARTH_PASSWORD_COST: "cheap" } });
  const r = await post(h, "/signup", { username: "alice", password: "a long passphrase" });
  expect(r.status).toBe(501);
  expect(r.body.error.message).toContain('HEARTH_PASSWORD_COST must be standard or test (it is "cheap")');
  expect(await h.row("SELECT id FROM accounts")).toBeUndefined();
});

test("a backup passphrase is stretched at age's own scrypt cost, at test at a small one the file records, and opens with no setting", async () => {
  const passphrase = "the owner's passphrase";
  expect(SCRYPT_WORK_FACTOR.standard).toBe(18);
  expect(sealingOf({ HEARTH_BACKUP_PASSPHRASE: passphrase })).toEqual({ passphrase, workFactor: 18 });
  expect(sealingOf({ HEARTH_BACKUP_PASSPHRASE: passphrase, HEARTH_PASSWORD_COST: "standard" })).toEqual({ passphrase, workFactor: 18 });
  const cheap = sealingOf({ HEARTH_BACKUP_PASSPHRASE: passphrase, HEARTH_PASSWORD_COST: "test" });
  expect(cheap).toEqual({ passphrase, workFactor: 10 });
  const dir = mkdtempSync(join(tmpdir(), "hearth-cost-"));
  try {
    writeFileSync(join(dir, "plain"), "the archive");
    await seal(join(dir, "plain"), join(dir, "sealed"), cheap);
    // age's header names the stanza's cost: "-> scrypt <salt> <log2 N>".
    expect(readFileSync(join(dir, "sealed"), "latin1").split("\n")[1]).toMatch(/^-> scrypt \S+ 10$/);
    await unseal(join(dir, "sealed"), join(dir, "opened"), { passphrase });
    expect(readFileSync(join(dir, "opened"), "utf8")).toBe("the archive");
    await expect(unseal(join(dir, "sealed"), join(dir, "wrong"), { passphrase: "not it" })).rejects.toThrow("cannot be decrypted");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
