// one store: what reaches the log; nothing in it depends on the store
// No token, password, session secret or CSRF token ever reaches the log.
import { expect, test } from "bun:test";
import { startHearth } from "../harness.ts";
import { post, signIn, signUp } from "./people.ts";

test("the log never holds a secret", async () => {
  const lines: string[] = [];
  const keep = (level: string) => (msg: string, data?: Record<string, unknown>) => lines.push(JSON.stringify({ level, msg, ...data }));
  const logger = { info: keep("info"), warn: keep("warn"), error: keep("error"), line: (d: Record<string, unknown>) => lines.push(JSON.stringify(d)) };
  const h = await startHearth({ logger });
  try {
    const password = "Tr0ub4dor&3-horse";
    const s = await signUp(h, "alice", password);
    await post(h, "/signin", { username: "alice", password: "wrong-" + password });
    const again = await signIn(h, "alice", password);
    const made = await post(h, "/token", { name: "laptop", scopes: ["notes"] }, { cookie: s.cookie, "x-csrf-token": s.csrf });
    const token = made.body.result.token as string;
    await h.call("notes/add", { title: "t", text: "x" }, { token });
    await h.call("notes/list", {}, { headers: { cookie: again.cookie } });
    await h.call("notes/add", { title: "t", text: "x" }, { headers: { cookie: again.cookie } });
    await h.call("notes/list", {}, { headers: { authorization: "Bearer hth_not-a-real-token" } });
    await post(h, "/token/revoke", { id: made.body.result.id }, { cookie: s.cookie, "x-csrf-token": s.csrf });
    await h.call("notes/list", {}, { token });

    const all = lines.join("\n");
    // The log did record what happened, so its silence about secrets means something.
    expect(all).toContain("signed up");
    expect(all).toContain("sign-in refused");
    expect(all).toContain("token created");
    expect(all).toContain('"status":401');
    for (const secret of [password, token, token.slice(4), "hth_not-a-real-token", s.cookie.split("=")[1], again.cookie.split("=")[1], s.csrf, again.csrf])
      expect(all).not.toContain(secret);
  } finally {
    await h.stop();
  }
});
