// One Hearth for bench/policy.ts: a note to read, a token without a policy
// and one with a policy of its own (printed, one a line, after the port),
// and with BENCH_AUDIT=off no audit log, so the log's cost can be measured
// against the same build doing everything else.
import { ensureAccount, issueToken } from "../core/auth/tokens.ts";
import { listen } from "../core/http/serve.ts";
import { createRuntime } from "../core/instance.ts";
import { OPEN } from "../core/policy/rules.ts";

const rt = await createRuntime({ env: process.env as Record<string, string> });
await rt.start();
if (process.env.BENCH_AUDIT === "off") rt.audit = null;
const account = await ensureAccount(rt.store, "bench");
const plain = await issueToken(rt.store, account, { name: "no policy" });
const ruled = await issueToken(rt.store, account, { name: "with a policy" });
// Reads run, as they would for most grants: the check is made on every call, and passes.
await rt.store.write(() => rt.policies!.put(account.id, ruled.id, { ...OPEN, classes: { ...OPEN.classes, destructive: "ask", outbound: "ask", costs: "ask" }, creditsPerDay: 1000 }));
const app = listen(rt, { port: Number(process.env.PORT ?? 0), hostname: "127.0.0.1" });
const added = await fetch(`${app.url}/api/v1/notes/add`, {
  method: "POST",
  headers: { authorization: `Bearer ${plain.token}`, "content-type": "application/json" },
  body: JSON.stringify({ title: "bench", text: "a note read under load" }),
});
if (added.status !== 200) throw new Error(`notes/add answered ${added.status}`);
console.log(app.url);
console.log(plain.token);
console.log(ruled.token);
