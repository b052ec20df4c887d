// App passwords: made from a preset on /token, shown once with where to sign
// in, usable as the Basic password of a sync client within their scope, and
// revoked like any token.
import { afterEach, expect, test } from "bun:test";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { form, get, signUp } from "../auth/people.ts";

let h: Hearth | null = null;
afterEach(async () => {
  await h?.stop();
  h = null;
});

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;
const propfind = (hh: Hearth, path: string, auth: string) => fetch(`${hh.url}${path}`, { method: "PROPFIND", headers: { authorization: auth, depth: "0" } });

test("the contacts preset makes a token for contacts alone, which a CardDAV client uses until it is revoked", async () => {
  h = await startHearth();
  const s = await signUp(h, "alice");
  const p = await get(h, "/token", { cookie: s.cookie, accept: "text/html" });
  const presets = [...p.text.matchAll(/<form method="post" action="\/token" class="preset">([\s\S]*?)<\/form>/g)].map((m) => m[1]);
  const scopesOf = (f: string) => [...f.matchAll(/name="scopes" value="([^"]+)"/g)].map((m) => m[1]);
  expect(presets.map(scopesOf)).toEqual([["events", "tasks"], ["contacts"]]);

  const fields = [...presets[1].matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1], m[2]] as [string, string]);
  const made = await form(h, "/token", fields, { cookie: s.cookie });
  expect(made.status).toBe(200);
  const token = /<code class="secret" id="new-token">([^<]+)<\/code>/.exec(made.text)![1];
  expect(made.text).toContain(`${h.url}/dav/`);
  expect(made.text).toContain("<code>alice</code>");

  expect((await propfind(h, "/dav/addressbooks/alice/contacts/", basic("alice", token))).status).toBe(207);
  expect((await propfind(h, "/dav/calendars/alice/events/", basic("alice", token))).status).toBe(403);
  expect((await h.call("notes/list", {}, { token })).status).toBe(403);

  const [listed] = (await get(h, "/token", { cookie: s.cookie })).body.result;
  expect(listed.scopes).toEqual(["contacts"]);
  expect((await form(h, "/token/revoke", [["csrf", s.csrf], ["id", listed.id]], { cookie: s.cookie })).status).toBe(303);
  const after = await propfind(h, "/dav/addressbooks/alice/contacts/", basic("alice", token));
  expect(after.status).toBe(401);
  expect(after.headers.get("www-authenticate")).toContain("Basic");
});

test("sync requests count against the token's rate limit as API reads do", async () => {
  // A clock that stands still: the bucket never refills while a busy machine takes its time between requests.
  h = await startHearth({ clock: new TestClock(), env: { HEARTH_RATE_READS: "3" } });
  const token = await h.token("alice", { scopes: ["contacts"] });
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) statuses.push((await propfind(h, "/dav/addressbooks/alice/contacts/", basic("alice", token))).status);
  expect(statuses).toEqual([207, 207, 207, 429]);
  const limited = await propfind(h, "/dav/addressbooks/alice/contacts/", basic("alice", token));
  expect(limited.headers.get("retry-after")).toBeString();
  // The same bucket as the API's reads: the API is limited too.
  expect((await h.call("contacts/list", {}, { token })).status).toBe(429);
});
