// HTTP Basic with a token as the password: what calendar, contacts and file
// sync clients send, since they can only be given a username and a password.
import { afterEach, describe, expect, test } from "bun:test";
import { startHearth, type Hearth } from "../harness.ts";

let h: Hearth | null = null;
afterEach(async () => {
  await h?.stop();
  h = null;
});

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;

describe("Basic authentication", () => {
  test("the token as password, under its account's username, calls as that account within the token's scope", async () => {
    h = await startHearth();
    const token = await h.token("alice", { scopes: ["notes"] });
    const add = await h.call("notes/add", { title: "t", text: "x" }, { headers: { authorization: basic("alice", token) } });
    expect(add.status).toBe(200);
    const got = await h.call("notes/get", { title: "t" }, { headers: { authorization: basic("alice", token) } });
    expect(got.body.result.text).toBe("x");
    const out = await h.call("tasks/list", {}, { headers: { authorization: basic("alice", token) } });
    expect(out.status).toBe(403);
  });

  test("another username, a wrong or revoked token, or a malformed header is 401", async () => {
    h = await startHearth();
    const token = await h.token("alice");
    await h.token("bob");
    for (const auth of [basic("bob", token), basic("alice", "hth_nope"), basic("", token), "Basic !!!", "Basic"]) {
      const r = await h.call("notes/list", {}, { headers: { authorization: auth } });
      expect(r.status).toBe(401);
      expect(r.body.error.kind).toBe("unauthenticated");
    }
  });

  test("a browser's cross-site request carrying remembered Basic credentials identifies no one", async () => {
    h = await startHearth();
    const token = await h.token("alice");
    const r = await h.call("notes/list", {}, { headers: { authorization: basic("alice", token), "sec-fetch-site": "cross-site" } });
    expect(r.status).toBe(401);
  });
});
