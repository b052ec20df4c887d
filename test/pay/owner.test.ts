// Whose calls are metered: on a default install the accounts are the owner's
// own and priced methods are free for them; an owner who hosts others turns
// metering on for accounts, and chooses per account from the command line.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliHost, coreWiring } from "../../core/instance.ts";
import { startHearth, storeEnv, type Hearth } from "../harness.ts";
import { runs } from "./plugins/meter/index.ts";

const PLUGINS = join(import.meta.dir, "plugins");
const QUIET = { HEARTH_PLUGINS: PLUGINS, HEARTH_RATE_PRICED: "0", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" };

const started: Hearth[] = [];
afterAll(async () => {
  for (const h of started) await h.stop();
});
async function start(env: Record<string, string> = {}, dataDir?: string) {
  const h = await startHearth({ env: { ...QUIET, ...env }, dataDir });
  started.push(h);
  return h;
}

const balance = async (h: Hearth, token: string) => {
  const r = await h.call("credits/balance", {}, { token });
  expect(r.status).toBe(200);
  return r.body.result as { balance: number; metered: boolean; entries: unknown[] };
};

/** Runs `hearth credits …` against a data folder; returns its exit code and what it printed. */
async function credits(dir: string, argv: string[]) {
  const env: Record<string, string> = { HEARTH_DATA: dir, ...(await storeEnv(dir)) };
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  // Kept apart: what else in this process says meanwhile on stderr (a warning, a notice) is not the command's answer.
  const out: string[] = [];
  const err: string[] = [];
  const orig = process.stdout.write.bind(process.stdout);
  const origErr = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((s: string) => (out.push(String(s)), true)) as typeof process.stdout.write;
  process.stderr.write = ((s: string) => (err.push(String(s)), true)) as typeof process.stderr.write;
  try {
    return { code: await coreWiring.cli.get("credits")!.run(argv, cliHost), out: out.join(""), err: err.join("") };
  } finally {
    process.stdout.write = orig;
    process.stderr.write = origErr;
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe("a default install", () => {
  test("the owner's accounts call priced methods free, nothing is charged, and a stranger still is not served free", async () => {
    const h = await start();
    const owner = await h.token("owner");
    const guest = await h.token("guest");
    const ran = runs.echo ?? 0;
    for (const t of [owner, guest]) {
      const r = await h.call("meter/echo", { text: "mine" }, { token: t });
      expect(r.status).toBe(200);
      expect(r.body.result.text).toBe("mine");
      const b = await balance(h, t);
      expect(b).toMatchObject({ balance: 0, metered: false, entries: [] });
    }
    expect((await h.call("meter/record", { text: "a write" }, { token: owner })).status).toBe(200);
    expect((runs.echo ?? 0) - ran).toBe(2);
    const stranger = await h.call("meter/echo", { text: "free?" });
    expect(stranger.status).not.toBe(200);
    expect((runs.echo ?? 0) - ran).toBe(2);
  });

  test("the home page and /status say who pays", async () => {
    const h = await start();
    const status = (await (await fetch(`${h.url}/status`, { headers: { accept: "application/json" } })).json()) as { result: { payments: { accounts: string; text: string } } };
    expect(status.result.payments.accounts).toBe("off");
    expect(status.result.payments.text).toContain("Accounts here call every method free");
    const home = await (await fetch(`${h.url}/`, { headers: { accept: "text/html" } })).text();
    expect(home).toContain("Accounts here call every method free");
    const page = await (await fetch(`${h.url}/status`, { headers: { accept: "text/html" } })).text();
    expect(page).toContain("Accounts here call every method free");
  });
});

describe("an owner who hosts others", () => {
  test("HEARTH_METER_ACCOUNTS=on meters every account but the admins", async () => {
    const h = await start({ HEARTH_METER_ACCOUNTS: "on" });
    const admin = await h.token("root", { admin: true });
    const guest = await h.token("guest");
    const refused = await h.call("meter/echo", { text: "x" }, { token: guest });
    expect(refused.status).toBe(402);
    expect(refused.body.error.message).toContain("ask the instance's admin for credits");
    expect((await balance(h, guest)).metered).toBe(true);

    const own = await h.call("meter/echo", { text: "x" }, { token: admin });
    expect(own.status).toBe(200);
    expect(await balance(h, admin)).toMatchObject({ balance: 0, metered: false });

    await h.grant("guest", 5);
    expect((await h.call("meter/echo", { text: "x" }, { token: guest })).status).toBe(200);
    expect((await balance(h, guest)).balance).toBe(2);
    const status = (await (await fetch(`${h.url}/status`, { headers: { accept: "application/json" } })).json()) as { result: { payments: { accounts: string } } };
    expect(status.result.payments.accounts).toBe("on");
  });

  test("HEARTH_METER_ACCOUNTS=all meters the admins too; a value it does not know stops the start", async () => {
    const h = await start({ HEARTH_METER_ACCOUNTS: "all" });
    const admin = await h.token("root", { admin: true });
    expect((await h.call("meter/echo", { text: "x" }, { token: admin })).status).toBe(402);
    await expect(startHearth({ env: { ...QUIET, HEARTH_METER_ACCOUNTS: "sometimes" } })).rejects.toThrow(/HEARTH_METER_ACCOUNTS must be off, on or all/);
  });

  test("hearth credits meter chooses for one account, and default goes back to the setting", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-meter-"));
    const first = await startHearth({ dataDir: dir, env: QUIET });
    await first.token("root", { admin: true });
    await first.token("friend");
    await first.stop();

    expect((await credits(dir, ["meter", "--user", "root", "on"])).code).toBe(0);
    const off = await credits(dir, ["meter", "--user", "friend", "off"]);
    expect(off.code).toBe(0);
    expect(JSON.parse(off.out)).toEqual({ user: "friend", metered: false, chosen: true });
    expect((await credits(dir, ["meter", "--user", "friend", "sometimes"])).code).toBe(2);
    expect((await credits(dir, ["meter", "--user", "nobody", "on"])).code).toBe(1);

    const h = await start({ HEARTH_METER_ACCOUNTS: "on" }, dir);
    const root = await h.token("root");
    const friend = await h.token("friend");
    expect((await h.call("meter/echo", { text: "x" }, { token: root })).status).toBe(402);
    expect((await h.call("meter/echo", { text: "x" }, { token: friend })).status).toBe(200);

    // The choice is read on every call: going back to the setting takes effect at once.
    expect((await credits(dir, ["meter", "--user", "root", "default"])).code).toBe(0);
    expect((await credits(dir, ["meter", "--user", "friend", "default"])).code).toBe(0);
    expect((await h.call("meter/echo", { text: "x" }, { token: root })).status).toBe(200);
    expect((await h.call("meter/echo", { text: "x" }, { token: friend })).status).toBe(402);
    expect((await balance(h, friend)).metered).toBe(true);
  });
});
