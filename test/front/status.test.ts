// /status and the providers it probes: every provider is a loopback server of
// its own that counts what reaches it. A page anyone may open makes the
// instance reach out to none of them; an admin's look probes each at most once
// within a round's minute, however often the page is opened.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { PROBE_EVERY_MS } from "../../core/http/pages/status.ts";
import { buildRegistry } from "../../core/registry.ts";
import { allProviders } from "../../core/upstream/providers.ts";
import { TestClock, type Hearth } from "../harness.ts";
import { startFixture } from "../upstream/fixture-server.ts";
import { getPage, signUp, startFront, startProviders, type Person } from "./instance.ts";

const shared = startProviders();
let hosts: Map<string, ReturnType<typeof startFixture>>;
const clock = new TestClock(new Date("2026-11-21T10:00:00Z").getTime());
let h: Hearth;
let admin: Person;
let member: Person;

beforeAll(async () => {
  // Loading the plugins defines their providers, so each can be given a host of its own before the instance starts.
  await buildRegistry({ pluginsDir: join(import.meta.dir, "..", "..", "plugins") });
  hosts = new Map(allProviders().map((p) => [p.name, startFixture({ "/*": () => new Response("ok") })]));
  hosts.set("CHAIN", startFixture({ "/*": () => Response.json({ jsonrpc: "2.0", id: 1, result: "0x1" }) }));
  const env: Record<string, string> = { CHAIN_RPC_URL: hosts.get("CHAIN")!.url };
  for (const p of allProviders()) env[`${p.name}_URL`] = hosts.get(p.name)!.url;
  h = await startFront(shared.url, env, { clock });
  admin = await signUp(h.url, "ann"); // the first account: the admin
  member = await signUp(h.url, "bob");
});
afterAll(async () => {
  await h.stop();
  for (const f of hosts.values()) f.stop();
  shared.stop();
});

const heard = () => [...hosts].map(([name, f]) => [name, f.seen.length] as const);
const total = () => heard().reduce((n, [, c]) => n + c, 0);
const status = async (who: Person | null) => (await (await getPage(h.url, "/status", who, "application/json")).json()).result;

test("opened by a stranger or a member who is not an admin, /status probes no provider and shows no probe", async () => {
  for (const who of [null, member]) {
    const s = await status(who);
    expect(s.probed).toBe(false);
    expect(s.providers.length).toBeGreaterThan(20);
    for (const p of s.providers) expect(p).toMatchObject({ probe: null, checking: false });
    for (const i of s.integrations) expect(i).toMatchObject({ probe: null, checking: false });
    const page = await (await getPage(h.url, "/status", who)).text();
    expect(page).toContain("checked for admins");
    expect(page).not.toContain("being checked");
  }
  expect(total()).toBe(0);
});

test("an admin's looks probe each provider once a round: again only once the round's minute is over", async () => {
  // Opened several times at once and again while the round runs: one round between them.
  const first = await Promise.all([status(admin), status(admin), getPage(h.url, "/status", admin).then((r) => r.text())]);
  expect(first[0].probed).toBe(true);
  let s = first[0];
  while (s.providers.some((p: { checking: boolean }) => p.checking) || s.integrations.some((i: { checking: boolean }) => i.checking)) {
    await Bun.sleep(20);
    s = await status(admin);
  }
  for (const p of s.providers) if (hosts.has(p.name)) expect(p.probe).toMatchObject({ answers: true, said: "HTTP 200" });
  expect(s.integrations.find((i: { name: string }) => i.name === "chain").probe).toMatchObject({ answers: true });
  for (const [name, count] of heard()) expect([name, count]).toEqual([name, 1]);

  // Within the minute the answers are the round's: nobody is asked again.
  clock.advance(PROBE_EVERY_MS - 1000);
  for (let i = 0; i < 3; i++) expect((await status(admin)).providers.every((p: { probe: unknown; name: string }) => !hosts.has(p.name) || p.probe !== null)).toBe(true);
  for (const [name, count] of heard()) expect([name, count]).toEqual([name, 1]);
  // A stranger after the admin is not shown them either.
  expect((await status(null)).providers.every((p: { probe: unknown }) => p.probe === null)).toBe(true);

  // Once it is over, the next admin's look starts one more round, and only one.
  clock.advance(1000);
  await Promise.all([status(admin), status(admin)]);
  while (heard().some(([, c]) => c < 2)) {
    await Bun.sleep(20);
    await status(admin);
  }
  for (const [name, count] of heard()) expect([name, count]).toEqual([name, 2]);
});
