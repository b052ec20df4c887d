// one store: reading the settings file; starts no instance of the pass's store
// Where settings and data live, seen from real processes: the settings file is
// read at start with the environment winning over it, and the server and the
// CLI use one data folder whatever folder each is started from.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { call, cli, serve } from "../hardening/process.ts";

const root = join(import.meta.dir, "../..");
const scratch = mkdtempSync(join(tmpdir(), "hearth-settings-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The base URL the instance names in its OpenAPI document: HEARTH_PUBLIC_URL when set. */
const publicUrl = async (url: string) => ((await (await fetch(`${url}/openapi.json`)).json()) as { servers: { url: string }[] }).servers[0].url;

test("a setting in the settings file takes effect at start, and the environment overrides it", async () => {
  const dir = join(scratch, "file");
  mkdirSync(dir);
  const file = join(dir, "hearth.env");
  writeFileSync(file, `# the owner's settings\nHEARTH_DATA=${join(dir, "data")}\nHEARTH_PUBLIC_URL=https://from-the-file.example\n`);

  const fromFile = await serve(null, { HEARTH_CONFIG: file });
  try {
    expect(await publicUrl(fromFile.url)).toBe("https://from-the-file.example");
    // HEARTH_DATA came from the file too: the database is where it says.
    expect(existsSync(join(dir, "data", "hearth.db"))).toBe(true);
  } finally {
    await fromFile.stop();
  }

  const overridden = await serve(null, { HEARTH_CONFIG: file, HEARTH_PUBLIC_URL: "https://from-the-environment.example" });
  try {
    expect(await publicUrl(overridden.url)).toBe("https://from-the-environment.example");
  } finally {
    await overridden.stop();
  }
});

test("a settings file HEARTH_CONFIG names must exist: the command says which file and stops", async () => {
  const r = await cli(["token", "create", "--user", "alice"], { HEARTH_CONFIG: join(scratch, "no-such.env"), HEARTH_DATA: join(scratch, "unused") });
  expect(r.code).toBe(1);
  expect(r.err).toContain(join(scratch, "no-such.env"));
  expect(existsSync(join(scratch, "unused"))).toBe(false);
});

test("the CLI run from another folder uses the server's database", async () => {
  const data = join(scratch, "shared", "data");
  // Relative, as a settings file may say it: taken from Hearth's folder, not from each process's working folder.
  const env = { HEARTH_DATA: relative(root, data), HEARTH_METERING: "off" };
  // Deeper than the checkout, so the relative path cannot land on the same folder by chance.
  const elsewhere = join(scratch, "elsewhere", "one", "two", "three");
  mkdirSync(elsewhere, { recursive: true });
  const server = await serve(null, env, { cwd: root });
  try {
    const made = await cli(["token", "create", "--user", "alice"], env, { cwd: elsewhere });
    // Only the note on the account it made, the instance's admin, which has no password yet.
    expect(made.err).toStartWith("made alice, the admin of this instance; alice has no password yet");
    expect(made.code).toBe(0);
    const added = await call(server.url, "notes/add", { title: "from elsewhere", text: "same database" }, made.out);
    expect(added.status).toBe(200);
    expect(existsSync(join(data, "hearth.db"))).toBe(true);
    expect(readdirSync(join(scratch, "elsewhere"))).toEqual(["one"]);
    expect(readdirSync(elsewhere)).toEqual([]);
  } finally {
    await server.stop();
  }
});

test("commands that do not need the database create no folder", async () => {
  const cwd = join(scratch, "bare");
  mkdirSync(cwd);
  // No HEARTH_DATA: the default folder would be made if these opened the database.
  const env = { HEARTH_CONFIG: "/dev/null", HEARTH_URL: "http://127.0.0.1:9" };
  const before = existsSync(join(root, "data"));
  const runs: [string[], number][] = [
    [["help"], 0],
    [["help", "notes"], 0],
    [["version"], 0],
    // Calls a server that is not there: refused, but nothing made locally.
    [["notes", "list"], 1],
    [["notes", "nosuch"], 2],
  ];
  for (const [args, code] of runs) expect({ args, code: (await cli(args, env, { cwd })).code }).toEqual({ args, code });
  expect(readdirSync(cwd)).toEqual([]);
  expect(existsSync(join(root, "data"))).toBe(before);
});
