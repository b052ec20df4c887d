// What the audit log costs a read, without sockets: GET notes/get called in
// this process, as Bun's router calls it, with the log and without it in
// turn (the same runtime, its log set aside for the rounds without), and what
// notes/add costs with its entry. CPU per request, medians of BENCH_ROUNDS
// rounds (default 7), and each round's difference measured beside it.
//
//   bun bench/auditcost.ts
import { startHearth } from "../core/testing.ts";
import { handleApi } from "../core/http/api.ts";
import { inProcessCpuUs, ownCpuUs } from "./lib.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const N = Number(process.env.BENCH_CALLS ?? 20_000);
const BATCH = 32;

const hearth = await startHearth({ env: { HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0", HEARTH_LOG: "off" } });
try {
  const rt = hearth.rt;
  const log = rt.audit;
  const token = await hearth.token("bench");
  await hearth.call("notes/add", { title: "bench", text: "a note read under load" }, { token });
  const base = hearth.url;
  const auth = { authorization: `Bearer ${token}` };
  const peer = () => "127.0.0.1";
  let n = 0;
  type Route = { name: string; make: () => Request; run: (req: Request) => Response | Promise<Response>; audit: boolean };
  const get = () => new Request(`${base}/api/v1/notes/get?title=bench`, { headers: auth });
  const add = () => new Request(`${base}/api/v1/notes/add`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: `{"title":"bench ${n++ % 100}","text":"a note written under load"}` });
  const api = (service: string, method: string) => (req: Request) => handleApi(rt, req, service, method, peer);
  const routes: Route[] = [
    { name: "GET notes/get, audit log off", make: get, run: api("notes", "get"), audit: false },
    { name: "GET notes/get, audit log on", make: get, run: api("notes", "get"), audit: true },
    { name: "POST notes/add, audit log on", make: add, run: api("notes", "add"), audit: true },
  ];
  const measure = async (r: Route): Promise<number> => {
    rt.audit = r.audit ? log : null;
    let spent =
      N *
      (await inProcessCpuUs(r.make, r.run, N, BATCH, (first) => {
        if (first.status !== 200) throw new Error(`${r.name}: ${first.status}`);
      }));
    // What is still held is written, and counted, with the round that made it.
    const t = ownCpuUs();
    await log?.flush();
    spent += ownCpuUs() - t;
    return spent / N;
  };
  for (const r of routes) await measure(r);
  const seen: number[][] = routes.map(() => []);
  for (let i = 0; i < ROUNDS; i++) for (let j = 0; j < routes.length; j++) seen[j].push(await measure(routes[j]));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (let j = 0; j < routes.length; j++) {
    const over = median(seen[j].map((x, i) => x - seen[0][i]));
    console.log(`${routes[j].name.padEnd(32)} ${median(seen[j]).toFixed(1).padStart(7)} µs CPU/request   ${j ? `${over >= 0 ? "+" : ""}${over.toFixed(1)} µs over the first (each round's, median)` : ""}   rounds: ${seen[j].map((x) => x.toFixed(1)).join(" ")}`);
  }
  const share = median(seen[1].map((x, i) => x / seen[0][i] - 1));
  console.log(`audit log: ${(share * 100).toFixed(1)}% of a read's CPU (each round's, median)`);
} finally {
  await hearth.stop();
}
