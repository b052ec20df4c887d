// recall/search over 100,000 recorded messages: p50 and p99 of the call
// through dispatch (validation, the shared FTS5 index, the message lookup,
// highlighting), on a mix of common, rare, two-word and prefix queries.
// The messages are one account's (the owner filter keeps none out), and a
// second account's as many again share the index. Target: p99 under 20 ms.
// `bun bench/recall.ts [--messages=N] [--queries=N]`; benchRecall() returns the numbers.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureAccount } from "../core/auth/tokens.ts";
import { newCall } from "../core/call.ts";
import { dispatch } from "../core/dispatch.ts";
import type { Caller } from "../core/plugin.ts";
import { createRuntime } from "../core/instance.ts";
import { addMessage, openConversation, type Client } from "../plugins/recall/store.ts";

export interface RecallBench {
  messages: number;
  queries: number;
  recordSec: number;
  ms: { p50: number; p99: number; max: number };
  /** Results per query, on average: the searches found something to rank. */
  meanResults: number;
  byKind: Record<string, { p50: number; p99: number }>;
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
const round = (n: number) => Math.round(n * 100) / 100;

// Words of letters drawn at English frequencies, shortest the most used, with
// Zipf's law (a word's use ~ 1/rank): as in real text, a few short words are in
// most messages and most words are in few.
const LETTERS = "eeeeeeeeeeeettttttttaaaaaaaaoooooooiiiiiiinnnnnnnssssssrrrrrrhhhhhlllldddcccuuummmwwffggyyppbbvkjxqz";
function vocabulary(size: number, rand: () => number): string[] {
  const words = new Set<string>();
  while (words.size < size) {
    const len = 2 + Math.floor(rand() * 3) + Math.floor(rand() * rand() * 9);
    let w = "";
    for (let i = 0; i < len; i++) w += LETTERS[Math.floor(rand() * LETTERS.length)];
    words.add(w);
  }
  return [...words].sort((a, b) => a.length - b.length);
}

function zipf(size: number, rand: () => number): () => number {
  const cdf = new Float64Array(size);
  let sum = 0;
  for (let r = 0; r < size; r++) cdf[r] = sum += 1 / (r + 1);
  return () => {
    const x = rand() * sum;
    let lo = 0;
    let hi = size - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

export async function benchRecall(o: { messages?: number; queries?: number } = {}): Promise<RecallBench> {
  const total = o.messages ?? 100_000;
  const queries = o.queries ?? 2000;
  const dir = mkdtempSync(join(tmpdir(), "hearth-bench-recall-"));
  const rt = await createRuntime({ env: { HEARTH_DATA: dir, HEARTH_LOG: "off", HEARTH_METERING: "off", AGENT_WORKER: "off" } });
  await rt.start();
  try {
    const rand = rng(42);
    const words = vocabulary(20_000, rand);
    const rank = zipf(words.length, rand);
    const pick = () => words[rank()];
    const sentence = (n: number) => Array.from({ length: n }, pick).join(" ");
    const clients: Client[] = ["web", "mail", "cli"];

    const me = await ensureAccount(rt.store, "bench");
    const other = await ensureAccount(rt.store, "neighbour");
    const t0 = performance.now();
    for (const owner of [other, me]) {
      const caller: Caller = { account: owner, scopes: "*", via: "local" };
      // The agent writes conversations with its own index, as it does when it talks.
      const per = 20;
      for (let done = 0; done < total; ) {
        await rt.store.write(async () => {
          const ctx = rt.makeCtx("agent", "write", newCall(caller, { id: "bench" }), "ask", "");
          for (let c = 0; c < 250 && done < total; c++) {
            const at = 1_700_000_000_000 + done * 1000;
            const conv = await openConversation(ctx.db, { owner: owner.id, client: clients[done % 3], agent: "default", topic: sentence(6), at });
            for (let i = 0; i < per && done < total; i++, done++)
              await addMessage(ctx.db, ctx.index, conv, { role: i % 2 ? "assistant" : "user", content: sentence(8 + Math.floor(rand() * 30)), at: at + i });
          }
        });
      }
    }
    const recordSec = round((performance.now() - t0) / 1000);

    const caller: Caller = { account: me, scopes: "*", via: "local" };
    const kinds: Record<string, () => Record<string, unknown>> = {
      common: () => ({ query: words[Math.floor(rand() * 10)] }),
      rare: () => ({ query: words[2000 + Math.floor(rand() * 18_000)] }),
      two: () => ({ query: `${pick()} ${pick()}` }),
      // What someone types before finishing a word: the first three or four letters of a middling one.
      prefix: () => ({ query: words[200 + Math.floor(rand() * 2000)].slice(0, 3 + Math.floor(rand() * 2)) }),
      client: () => ({ query: pick(), client: clients[Math.floor(rand() * 3)], limit: 50 }),
    };
    const names = Object.keys(kinds);
    const search = (args: Record<string, unknown>) => dispatch(rt, { service: "recall", method: "search", args, caller, requestId: "bench" }) as Promise<unknown[]>;
    for (let i = 0; i < 100; i++) await search(kinds[names[i % names.length]]());
    const all: number[] = [];
    const per: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    let results = 0;
    for (let i = 0; i < queries; i++) {
      const kind = names[i % names.length];
      const args = kinds[kind]();
      const s = performance.now();
      const r = await search(args);
      const ms = performance.now() - s;
      results += r.length;
      all.push(ms);
      per[kind].push(ms);
    }
    all.sort((a, b) => a - b);
    const byKind: RecallBench["byKind"] = {};
    for (const n of names) {
      const xs = per[n].sort((a, b) => a - b);
      byKind[n] = { p50: round(pct(xs, 50)), p99: round(pct(xs, 99)) };
    }
    return { messages: total, queries, recordSec, ms: { p50: round(pct(all, 50)), p99: round(pct(all, 99)), max: round(all[all.length - 1]) }, meanResults: round(results / queries), byKind };
  } finally {
    await rt.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const arg = (name: string) => {
    const a = process.argv.find((x) => x.startsWith(`--${name}=`));
    return a ? Number(a.split("=")[1]) : undefined;
  };
  const b = await benchRecall({ messages: arg("messages"), queries: arg("queries") });
  console.log(`\nrecall/search over ${b.messages.toLocaleString("en")} messages (and as many of another account's), ${b.queries} queries; recorded in ${b.recordSec} s\n`);
  console.log(`all      p50 ${b.ms.p50} ms  p99 ${b.ms.p99} ms  max ${b.ms.max} ms  (target p99 < 20 ms); ${b.meanResults} results per query on average`);
  for (const [k, v] of Object.entries(b.byKind)) console.log(`${k.padEnd(8)} p50 ${v.p50} ms  p99 ${v.p99} ms`);
}
