// A setting the server's environment sets wins over the settings file: /settings
// shows the value in force and says so beside it, and saving one says it waits
// for the variable to go (and does not apply it now). The first run offers the
// x402 network beside the address, checked, and writes both to the file.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { startHearth, type Hearth } from "../harness.ts";
import { form, get, post, signUp, type Signed } from "../auth/people.ts";

let h: Hearth;
let admin: Signed;
const folder = mkdtempSync(join(tmpdir(), "hearth-envwins-"));
const file = join(folder, "hearth.env");
const saved = () => parseEnv(readFileSync(file, "utf8")) as Record<string, string>;

beforeAll(async () => {
  writeFileSync(file, "AI_MODEL=file-model\n");
  // As `hearth serve` starts with AI_MODEL exported in its environment and the file saying another.
  h = await startHearth({ env: { HEARTH_CONFIG: file, AI_MODEL: "env-model", AI_OLLAMA_URL: "", HEARTH_METERING: "off" }, environment: new Set(["AI_MODEL"]) });
  admin = await signUp(h, "alice");
});
afterAll(async () => {
  await h?.stop();
  rmSync(folder, { recursive: true, force: true });
});

const as = (s: Signed) => ({ cookie: s.cookie, "x-csrf-token": s.csrf });

test("the value in force is shown, marked as the environment's; one the file sets alone is not", async () => {
  const list = (await get(h, "/settings", { cookie: admin.cookie })).body.result.settings as any[];
  expect(list.find((s) => s.name === "AI_MODEL")).toMatchObject({ value: "env-model", saved: "file-model", overridden_by_environment: true, applies: "overridden by the environment" });
  expect(list.find((s) => s.name === "AI_BASE_URL")).toMatchObject({ applies: "at once" });
  expect(list.find((s) => s.name === "AI_BASE_URL")).not.toHaveProperty("overridden_by_environment");
  const page = await get(h, "/settings", { cookie: admin.cookie, accept: "text/html" });
  expect(page.text).toContain('id="s-AI_MODEL-env"');
  expect(page.text).toContain("environment, which wins over the settings file: the value shown is the one in force");
  expect(page.text).toMatch(/aria-describedby="s-AI_MODEL-hint s-AI_MODEL-env"/);
  // What the setting's own line says: overridden, and by what; not that a value saved here applies at once.
  const hint = (name: string) => /<span id="s-[A-Z_]+-hint" class="hint">([\s\S]*?)<\/span>/.exec(page.text.slice(page.text.indexOf(`id="s-${name}-hint"`) - 6))![1];
  expect(hint("AI_MODEL")).toContain("Overridden by the environment variable <code>AI_MODEL</code>.");
  expect(hint("AI_MODEL")).not.toContain("Applies at once");
  expect(hint("AI_BASE_URL")).toContain("Applies at once.");
});

test("saving an overridden setting writes the file, says it waits for the variable, and leaves the value in force", async () => {
  const r = await post(h, "/settings", { settings: { AI_MODEL: "new-model", AI_BASE_URL: "http://127.0.0.1:9/v1" } }, as(admin));
  expect(r.status).toBe(200);
  expect(r.body.result).toMatchObject({ overridden: ["AI_MODEL"], applied: ["AI_BASE_URL"] });
  expect(saved()).toMatchObject({ AI_MODEL: "new-model", AI_BASE_URL: "http://127.0.0.1:9/v1" });
  expect(h.rt.config.AI_MODEL).toBe("env-model");
  expect(h.rt.config.AI_BASE_URL).toBe("http://127.0.0.1:9/v1");
  // From the page: the notice says it plainly.
  const p = await form(h, "/settings", [["csrf", admin.csrf], ["group", "AI models"], ["AI_MODEL", "third-model"]], { cookie: admin.cookie });
  expect(p.status).toBe(200);
  expect(p.text).toContain("AI_MODEL is set in the server&#39;s environment, which wins over the file: what you saved takes effect only once that variable is removed");
  expect(saved().AI_MODEL).toBe("third-model");
});

test("the first run offers the x402 network beside the address, checks both, and writes them", async () => {
  const page = await get(h, "/setup", { cookie: admin.cookie, accept: "text/html" });
  expect(page.text).toContain('<option value="eip155:84532"');
  const base = { HEARTH_NAME: "Home", HEARTH_SIGNUP: "invite" };
  const badAddress = await post(h, "/setup", { settings: { ...base, X402_PAY_TO: "0x1234", X402_NETWORK: "eip155:84532" } }, as(admin));
  expect(badAddress.status).toBe(400);
  expect(badAddress.body.error.field).toBe("X402_PAY_TO");
  const badNetwork = await form(
    h,
    "/setup",
    [["csrf", admin.csrf], ["HEARTH_SIGNUP", "invite"], ["X402_PAY_TO", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"], ["X402_NETWORK", "eip155:1"]],
    { cookie: admin.cookie },
  );
  expect(badNetwork.status).toBe(400);
  expect(badNetwork.text).toContain("X402_NETWORK");
  expect(saved().X402_PAY_TO).toBeUndefined();
  const ok = await form(
    h,
    "/setup",
    [["csrf", admin.csrf], ["HEARTH_SIGNUP", "invite"], ["X402_PAY_TO", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"], ["X402_NETWORK", "eip155:84532"]],
    { cookie: admin.cookie },
  );
  expect(ok.status).toBe(303);
  expect(saved()).toMatchObject({ X402_PAY_TO: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", X402_NETWORK: "eip155:84532" });
});
