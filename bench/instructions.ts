// Instructions per request, counted under valgrind's callgrind: the same work
// gives the same count whatever else the machine is doing, where a rate from
// wrk moves by several percent between runs on a shared machine. Each server
// runs under callgrind, is warmed by wrk over one connection, has its counts
// zeroed, serves wrk for a while more, and has its counts dumped; the main
// thread's instructions over the requests served is the figure (the other
// threads, the JIT's and the collector's, run beside it on other cores).
// It counts work, not time: a system call or a cache miss costs one
// instruction here. Rates stay the benchmark's (`bun run bench`); this is for
// telling whether a change to the call path does less.
//
//   bun bench/instructions.ts     (needs valgrind; installed from Debian's packages when missing, as root)
//   INSTR_SECONDS=15 INSTR_WARM=20   seconds each scenario is counted, after seconds of warming (the JIT's tiers settle)
//   INSTR_LIMIT=off                  leaves out the hand-written limit (its row is the reference otherwise)
//   INSTR_ONLY=POST                  counts only the scenarios whose names hold this text
//   INSTR_BINARY=path                counts that build of Hearth, not built here (two builds side by side)
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, installed, waitFor200, wrkScript, type LoadOptions } from "./lib.ts";

const root = join(import.meta.dir, "..");
const binary = process.env.INSTR_BINARY ?? join(root, "dist/hearth");
const only = process.env.INSTR_ONLY;
const seconds = Number(process.env.INSTR_SECONDS ?? 15);
const warming = Number(process.env.INSTR_WARM ?? 20);

if (!installed("valgrind", () => !!Bun.which("valgrind") && !!Bun.which("callgrind_control"))) throw new Error("valgrind is needed: apt-get install valgrind");
if (!installed("wrk", () => !!Bun.which("wrk"))) throw new Error("wrk is needed: apt-get install wrk");
if (!process.env.INSTR_BINARY && Bun.spawnSync(["bun", join(root, "core/build.ts")], { stdout: "ignore", stderr: "inherit" }).exitCode !== 0) throw new Error("build failed");

const dir = mkdtempSync(join(tmpdir(), "hearth-instructions-"));
const env = { ...process.env, HEARTH_DATA: join(dir, "data"), HEARTH_LOG: "off", HOST: "127.0.0.1", HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0", HEARTH_RATE_PRICED: "0", HEARTH_COLLECTORS: "off" };

const rows: { scenario: string; requests: number; perRequest: number }[] = [];
/** Every server started, so a failure part-way leaves none running. */
const started: Counted[] = [];

interface Counted {
  base: string;
  pid: number;
  stdout: ReadableStream<Uint8Array>;
  /** Runs callgrind_control on it: -z zeroes the counts, -d dumps them. */
  control(flag: "-z" | "-d"): void;
  stop(): Promise<void>;
}

/** A server under callgrind, its counts going to files in `out` named by process and thread. */
function underCallgrind(cmd: string[], extra: Record<string, string>, out: string): Counted {
  // valgrind names the pipe callgrind_control reaches it by from USER and HOST: both see the same ones.
  const own = { ...env, ...extra };
  const proc = Bun.spawn(["valgrind", "--tool=callgrind", "--separate-threads=yes", "--smc-check=all-non-file", `--callgrind-out-file=${join(out, "cg.%p")}`, ...cmd], {
    env: own,
    stdout: "pipe",
    stderr: "ignore",
  });
  const counted: Counted = {
    base: `http://127.0.0.1:${extra.PORT}`,
    pid: proc.pid,
    stdout: proc.stdout,
    control(flag) {
      const r = Bun.spawnSync(["callgrind_control", flag, String(proc.pid)], { env: own, stdout: "pipe", stderr: "pipe" });
      if (r.exitCode !== 0 || /error|failed/i.test(r.stderr.toString())) throw new Error(`callgrind_control ${flag} ${proc.pid}: ${r.stdout}${r.stderr}`);
    },
    async stop() {
      proc.kill();
      await proc.exited;
    },
  };
  started.push(counted);
  return counted;
}

function wrk(opts: LoadOptions, secs: number): number {
  const script = join(dir, `load-${Math.random().toString(36).slice(2)}.lua`);
  writeFileSync(script, wrkScript(opts));
  const r = Bun.spawnSync(["wrk", "-t1", "-c1", `-d${secs}s`, "--timeout", "60s", "-s", script, opts.url], { stdout: "pipe", stderr: "pipe" });
  const text = r.stdout.toString();
  const served = /(\d+) requests in/.exec(text);
  if (!served || /Non-2xx|Socket errors/.test(text)) throw new Error(`wrk failed against ${opts.url}:\n${text}${r.stderr.toString()}`);
  return Number(served[1]);
}

/** The main thread's instructions per request while `opts` is served: counts zeroed, served, dumped (warm the server first). */
function count(server: Counted, out: string, opts: LoadOptions): { requests: number; perRequest: number } {
  for (const old of readdirSync(out)) if (old.startsWith(`cg.${server.pid}.`)) rmSync(join(out, old));
  server.control("-z");
  // On a loaded machine a window may see few requests or none: it is served again (the counts run on) until enough are.
  let requests = wrk(opts, seconds);
  for (let more = 0; requests < 20 && more < 8; more++) requests += wrk(opts, seconds);
  server.control("-d");
  if (requests === 0) throw new Error(`no request to ${opts.url} finished in ${seconds}s under callgrind: give it longer (INSTR_SECONDS, INSTR_WARM)`);
  // The dump of thread 1 (the main thread) ends in -01; callgrind writes it after answering.
  let totals: RegExpExecArray | null = null;
  for (let waited = 0; !totals && waited < 30_000; waited += 200) {
    Bun.sleepSync(200);
    const file = readdirSync(out).find((f) => f.startsWith(`cg.${server.pid}.`) && f.endsWith("-01"));
    totals = file ? /^(?:summary|totals):\s+(\d+)/m.exec(readFileSync(join(out, file), "utf8")) : null;
  }
  if (!totals) throw new Error(`callgrind wrote no counts for ${server.pid} in ${out}`);
  return { requests, perRequest: Math.round(Number(totals[1]) / requests) };
}

/** Counts each scenario on one server, after warming it with all of them (they share the call path, which the JIT compiles as it runs). */
function countAll(server: Counted, out: string, all: [string, LoadOptions][]) {
  const scenarios = only ? all.filter(([name]) => name.includes(only)) : all;
  for (const [, opts] of scenarios) wrk(opts, warming);
  for (const [scenario, opts] of scenarios) rows.push({ scenario, ...count(server, out, opts) });
}

async function firstLines(stream: ReadableStream<Uint8Array>, n: number): Promise<string[]> {
  const reader = stream.getReader();
  let text = "";
  while (text.split("\n").length <= n) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return text.split("\n").slice(0, n);
}

const note = { title: "bench", text: "a note read under load" };
const add = (base: string, token: string) =>
  fetch(`${base}/api/v1/notes/add`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(note) });

try {
  // The limit (bench/limit.ts): notes/get by hand.
  if (process.env.INSTR_LIMIT !== "off") {
    const out = mkdtempSync(join(dir, "limit-"));
    const server = underCallgrind(["bun", join(import.meta.dir, "limit.ts")], { PORT: String(freePort()), HEARTH_LIMIT_DB: join(dir, "limit.db") }, out);
    const [, token] = await firstLines(server.stdout, 2);
    await add(server.base, token);
    countAll(server, out, [["limit notes/get (by hand)", { url: `${server.base}/api/v1/notes/get?title=bench`, headers: { authorization: `Bearer ${token}` }, seconds }]]);
    await server.stop();
  }
  // Hearth, dist/hearth: notes/get over HTTP GET and POST, and tools/call notes_get in the 2026-07-28 revision.
  {
    const made = Bun.spawnSync([binary, "token", "create", "--user", "bench"], { env, stdout: "pipe", stderr: "ignore" });
    const token = made.stdout.toString().trim().split("\n").pop()!;
    const out = mkdtempSync(join(dir, "hearth-"));
    const server = underCallgrind([binary, "serve"], { PORT: String(freePort()) }, out);
    await waitFor200(`${server.base}/health`, 600_000);
    await add(server.base, token);
    const auth = { authorization: `Bearer ${token}` };
    const mcp = {
      ...auth,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "notes_get",
    };
    const call = {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "notes_get", arguments: { title: "bench" }, _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } },
    };
    // A 2025-11-25 session, opened as SDK 1.x clients open one.
    const legacy = { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream" };
    const opened = await fetch(`${server.base}/mcp`, {
      method: "POST",
      headers: legacy,
      body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } } }),
    });
    const sid = opened.headers.get("mcp-session-id");
    await opened.text();
    if (!sid) throw new Error(`initialize gave no session: ${opened.status}`);
    const inSession = { ...legacy, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" };
    await (await fetch(`${server.base}/mcp`, { method: "POST", headers: inSession, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) })).text();
    const sessionCall = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "notes_get", arguments: { title: "bench" } } };
    countAll(server, out, [
      ["notes/get (token)", { url: `${server.base}/api/v1/notes/get?title=bench`, headers: auth, seconds }],
      ["notes/get over POST", { url: `${server.base}/api/v1/notes/get`, method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ title: "bench" }), seconds }],
      ["MCP tools/call (2026-07-28)", { url: `${server.base}/mcp`, method: "POST", headers: mcp, body: JSON.stringify(call), seconds }],
      ["MCP tools/call (2025-11-25 session)", { url: `${server.base}/mcp`, method: "POST", headers: inSession, body: JSON.stringify(sessionCall), seconds }],
    ]);
    await server.stop();
  }
} finally {
  await Promise.all(started.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
}

const limit = rows[0].perRequest;
const row = (name: string) => rows.find((r) => r.scenario === name)?.perRequest;
console.log(`\nMain-thread instructions per request under callgrind, ${seconds}s counted after ${warming}s warming, one connection, ${new Date().toISOString()}\n`);
console.log("| scenario | requests counted | instructions per request | the limit's over this |");
console.log("|---|---|---|---|");
for (const r of rows) console.log(`| ${r.scenario} | ${r.requests} | ${r.perRequest.toLocaleString("en")} | ${r === rows[0] ? "" : `${Math.round((limit / r.perRequest) * 100)}%`} |`);
// MCP against Hearth's own POST of the same arguments with the same token: the share of POST's rate MCP reaches, in instructions.
const post = row("notes/get over POST");
if (post) {
  console.log("\n| MCP scenario | POST over it |\n|---|---|");
  for (const r of rows) if (r.scenario.startsWith("MCP")) console.log(`| ${r.scenario} | ${((post / r.perRequest) * 100).toFixed(1)}% |`);
}
