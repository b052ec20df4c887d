// one store: the start script; it ignores the pass's settings
// What the owner sees when Hearth starts: a real `hearth serve` process, its
// stdout read as a person reads the terminal, and its log as an operator does.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli, serve, type Served } from "../hardening/process.ts";

const scratch = mkdtempSync(join(tmpdir(), "hearth-start-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Stops the server and gives what it printed on stdout and stderr. */
async function stopAndRead(s: Served) {
  await s.stop();
  const [stdout, stderr] = await Promise.all([new Response(s.proc.stdout as ReadableStream).text(), new Response(s.proc.stderr as ReadableStream).text()]);
  return { lines: stdout.trim().split("\n"), stderr };
}

test("start-up says where to go next and sums up what needs settings in one line", async () => {
  const data = join(scratch, "owner");
  const env = { HEARTH_CONFIG: "/dev/null", HEARTH_LOG: "info" };

  const fresh = await serve(data, env, { stdout: true });
  const first = await stopAndRead(fresh);
  expect(first.lines[0]).toBe(`Hearth is running: open ${fresh.url}/signup to create the admin account`);
  expect(first.lines[1]).toMatch(/^Pages others wrote are served apart, in an origin of their own, at http:\/\/127\.0\.0\.1:\d+ \(HEARTH_SANDBOX_PORT\)$/);
  expect(first.lines[2]).toBe(`Data in ${data}; settings from /dev/null`);
  const needs = first.lines.find((l) => l.includes("need settings"));
  expect(needs).toMatch(new RegExp(`^\\d+ integrations and providers need settings \\(ai, mail, sms, x402, [A-Z_]+, …\\): see ${fresh.url}/status$`));
  // Four lines in all, and nothing at warning level in the log: the details are on /status.
  expect(first.lines).toHaveLength(4);
  expect(first.stderr).not.toContain('"level":"warn"');

  expect((await cli(["token", "create", "--user", "owner", "--admin"], { HEARTH_DATA: data })).code).toBe(0);
  const again = await serve(data, env, { stdout: true });
  const second = await stopAndRead(again);
  // The admin was made at the shell with no password: start-up says how to get in.
  expect(second.lines[0]).toBe(`Hearth is running at ${again.url}; its admin, owner, has no password yet: run hearth password --user owner --link and open the link it prints`);
  expect(second.lines.join("\n")).not.toContain("/signup");
});

test("a round of feed polls that all fail is one warning naming each feed", async () => {
  const feeds = join(scratch, "feeds.json");
  // A closed loopback port: every feed fails at once, as on an instance without the internet.
  const urls = ["http://127.0.0.1:9/world.xml", "http://127.0.0.1:9/uk.xml", "http://127.0.0.1:9/tech.xml"];
  writeFileSync(feeds, JSON.stringify({ feeds: urls.map((url, i) => ({ topic: "world", name: `feed ${i}`, url })) }));
  const s = await serve(join(scratch, "feeds"), { HEARTH_CONFIG: "/dev/null", HEARTH_LOG: "warn", NEWS_FEEDS_FILE: feeds });
  // The first read of an empty news service polls every feed.
  await fetch(`${s.url}/api/v1/news/list`);
  const { stderr } = await stopAndRead(s);
  const warnings = stderr
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((l) => l.level === "warn");
  expect(warnings).toHaveLength(1);
  expect(warnings[0].msg).toBe("news: 3 of 3 feeds could not be read");
  expect(warnings[0].failed.map((f: { feed: string }) => f.feed).sort()).toEqual([...urls].sort());
});
