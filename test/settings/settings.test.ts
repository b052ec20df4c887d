// /settings over HTTP: what it lists, validation naming the field, secrets
// never echoed, the settings file edited in place (comments and unknown lines
// kept) by one rename, and a new AI provider used by the next text/summarise
// without a restart.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { editSettings, envValue } from "../../core/settings/file.ts";
import { startOpenAiFixture, type OpenAiFixture } from "../fixtures/openai/server.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { get, post, signUp, type Signed } from "../auth/people.ts";

let h: Hearth;
let first: OpenAiFixture;
let second: OpenAiFixture;
let admin: Signed;
let token: string;
const folder = mkdtempSync(join(tmpdir(), "hearth-settings-"));
const file = join(folder, "hearth.env");
const ORIGINAL = "# my own notes about this box\nPORT=8080\nSOMETHING_ELSE=kept as it is\n\n# the model\nAI_MODEL=first-model\n";

beforeAll(async () => {
  first = await startOpenAiFixture();
  second = await startOpenAiFixture();
  writeFileSync(file, ORIGINAL);
  h = await startHearth({ env: { HEARTH_CONFIG: file, AI_BASE_URL: first.base, AI_MODEL: "first-model", AI_OLLAMA_URL: "", UPSTREAM_RETRY_MS: "0", HEARTH_METERING: "off" } });
  admin = await signUp(h, "alice");
  token = await h.token("alice");
});
afterAll(async () => {
  await h?.stop();
  first?.stop();
  second?.stop();
  rmSync(folder, { recursive: true, force: true });
});

const save = (settings: Record<string, string>, extra: Record<string, unknown> = {}, who = admin) =>
  post(h, "/settings", { settings, ...extra }, { cookie: who.cookie, "x-csrf-token": who.csrf });

test("lists every setting of the core and the plugins, grouped, secrets only as set or not", async () => {
  const r = await get(h, "/settings", { cookie: admin.cookie });
  expect(r.status).toBe(200);
  const list = r.body.result.settings as any[];
  const example = readFileSync(join(import.meta.dir, "..", "..", "config", "example.env"), "utf8");
  const names = new Set([...example.matchAll(/^(?:# )?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]));
  expect(new Set(list.map((s) => s.name))).toEqual(names);
  const key = list.find((s) => s.name === "AI_API_KEY");
  expect(key).toMatchObject({ secret: true, set: false, group: "AI models", applies: "at once" });
  expect(key).not.toHaveProperty("value");
  expect(list.find((s) => s.name === "PORT")).toMatchObject({ applies: "after restart", value: expect.any(String) });
  expect(r.body.result.file).toBe(file);
});

test("only an admin: another account gets 403, a stranger 401", async () => {
  const invite = await post(h, "/invites", {}, { cookie: admin.cookie, "x-csrf-token": admin.csrf });
  const carol = await signUp(h, "carol", "a long passphrase", { invite: invite.body.result.code });
  expect((await get(h, "/settings")).status).toBe(401);
  expect((await get(h, "/settings", { cookie: carol.cookie })).status).toBe(403);
  expect((await save({ HEARTH_SIGNUP: "open" }, {}, carol)).status).toBe(403);
  expect((await save({ HEARTH_SIGNUP: "open" }, {}, { cookie: "", csrf: "", setCookie: "" })).status).toBe(401);
  expect(h.rt.config.HEARTH_SIGNUP).toBe("invite");
});

test("a bad value is refused with the field and the reason, and nothing is written", async () => {
  const before = readFileSync(file, "utf8");
  for (const [name, value, says] of [
    ["HEARTH_SIGNUP", "maybe", "open, invite, closed"],
    ["PORT", "eighty", "whole number"],
    ["AI_BASE_URL", "ftp://models.example", "http://"],
    ["HEARTH_TZ", "Mars/Olympus", "IANA"],
    ["NO_SUCH_SETTING", "x", "no setting"],
  ] as const) {
    const r = await save({ HEARTH_PUBLIC_URL: "https://home.example.org", [name]: value });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ kind: "invalid_argument", field: name });
    expect(r.body.error.message).toContain(says);
  }
  expect(readFileSync(file, "utf8")).toBe(before);
});

test("saving keeps comments and unknown lines, leaves no temporary file, and says what waits for a restart", async () => {
  const r = await save({ PORT: "9090", HEARTH_TZ: "Europe/London", AI_API_KEY: "sk-secret value" });
  expect(r.status).toBe(200);
  expect(r.body.result).toEqual({ saved: ["PORT", "HEARTH_TZ", "AI_API_KEY"], applied: ["HEARTH_TZ", "AI_API_KEY"], restart: ["PORT"] });
  const text = readFileSync(file, "utf8");
  expect(text).toStartWith("# my own notes about this box\nPORT=9090\nSOMETHING_ELSE=kept as it is\n\n# the model\nAI_MODEL=first-model\n");
  expect(parseEnv(text)).toMatchObject({ PORT: "9090", HEARTH_TZ: "Europe/London", AI_API_KEY: "sk-secret value", SOMETHING_ELSE: "kept as it is" });
  expect(readdirSync(folder)).toEqual(["hearth.env"]);
  // The running instance took the ones it reads on every use, not the port it listens on.
  expect(h.rt.config.HEARTH_TZ).toBe("Europe/London");
  expect(h.rt.config.PORT).not.toBe("9090");
  // The secret is never sent back, on the page or as JSON.
  const page = await get(h, "/settings", { cookie: admin.cookie, accept: "text/html" });
  expect(page.text).not.toContain("sk-secret value");
  expect(page.text).toContain("secret, set");
  expect(JSON.stringify((await get(h, "/settings", { cookie: admin.cookie })).body)).not.toContain("sk-secret");
  // Cleared, its line goes.
  expect((await save({}, { clear: ["AI_API_KEY"] })).status).toBe(200);
  expect(parseEnv(readFileSync(file, "utf8")).AI_API_KEY).toBeUndefined();
});

test("a POST without the CSRF token changes nothing", async () => {
  const r = await post(h, "/settings", { settings: { HEARTH_SIGNUP: "open" } }, { cookie: admin.cookie });
  expect(r.status).toBe(403);
  expect(h.rt.config.HEARTH_SIGNUP).toBe("invite");
});

test("the AI test asks the provider as typed; a new provider serves the next text/summarise without a restart", async () => {
  first.reply({ say: "A summary from the first provider." });
  const a = await h.call("text/summarise", { text: "Some long text about a walk along the river on a sunny day. ".repeat(4) }, { token });
  expect(a.status).toBe(200);
  expect(first.posts.length).toBe(1);

  second.reply({ say: "ready" });
  const probe = await save({ AI_BASE_URL: second.base, AI_MODEL: "second-model" }, { test: "ai" });
  expect(probe.status).toBe(200);
  expect(probe.body.result.ok).toBe(true);
  expect(second.posts.at(-1)!.body.model).toBe("second-model");
  // Testing saves nothing.
  expect(h.rt.config.AI_BASE_URL).toBe(first.base);

  expect((await save({ AI_BASE_URL: second.base, AI_MODEL: "second-model" })).status).toBe(200);
  second.reply({ say: "A summary from the second provider." });
  const b = await h.call("text/summarise", { text: "Some long text about a walk along the river on a sunny day. ".repeat(4) }, { token });
  expect(b.status).toBe(200);
  expect(JSON.stringify(b.body.result)).toContain("second provider");
  expect(second.posts.at(-1)!.body.model).toBe("second-model");
  expect(first.posts.length).toBe(1);
  expect(parseEnv(readFileSync(file, "utf8"))).toMatchObject({ AI_BASE_URL: second.base, AI_MODEL: "second-model" });
});

test("the file edit: values are quoted only when they must be, repeats collapse, removal drops the line", () => {
  expect(envValue("X", "plain")).toBe("plain");
  expect(envValue("X", "has space")).toBe("'has space'");
  expect(envValue("X", "it's # here")).toBe('"it\'s # here"');
  expect(() => envValue("X", "two\nlines")).toThrow();
  expect(editSettings("A=1\n# note\nexport B=2\nB=3\n", { B: "4", C: "5", A: null })).toBe("# note\nB=4\n\nC=5\n");
  expect(editSettings("", { A: "1" })).toBe("A=1\n");
});
