// A resolved token is kept in memory for every request that sends it, so what
// one request learns about its client must not stay on it for the next.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { changedCaller } from "../../core/call.ts";
import { identify } from "../../core/http/identify.ts";
import { startHearth, type Hearth } from "../harness.ts";

let h: Hearth;
beforeAll(async () => {
  h = await startHearth();
});
afterAll(() => h.stop());

test("two clients sending the same token are each seen at their own address", async () => {
  const token = await h.token("alice");
  const req = () => new Request(`${h.url}/api/v1/notes/list`, { headers: { authorization: `Bearer ${token}` } });
  const first = await identify(h.rt, req(), "192.0.2.1");
  const second = await identify(h.rt, req(), "198.51.100.7");
  expect(first.account?.username).toBe("alice");
  expect(second.account?.username).toBe("alice");
  expect(first.address).toBe("192.0.2.1");
  expect(second.address).toBe("198.51.100.7");
});

test("the client's address is read only when asked, once, and a changed copy of the caller keeps it", async () => {
  const token = await h.token("alice");
  const req = new Request(`${h.url}/api/v1/notes/list`, { headers: { authorization: `Bearer ${token}` } });
  let asked = 0;
  const caller = await identify(h.rt, req, () => (asked++, "203.0.113.5"));
  expect(asked).toBe(0);
  const narrowed = changedCaller(caller, { scopes: ["notes"] });
  expect(asked).toBe(1);
  expect(narrowed.address).toBe("203.0.113.5");
  expect(narrowed.scopes).toEqual(["notes"]);
  expect(narrowed.account?.username).toBe("alice");
  expect(caller.address).toBe("203.0.113.5");
  expect(asked).toBe(1);
});

test("a bearer token is read however the header spells it, and any other form is refused", async () => {
  const token = await h.token("alice");
  const as = (authorization: string) => identify(h.rt, new Request(`${h.url}/api/v1/notes/list`, { headers: { authorization } }), "192.0.2.1");
  for (const form of [`Bearer ${token}`, `bearer ${token}`, `BEARER  ${token}`, `Bearer\t${token}`]) expect([form, (await as(form)).account?.username]).toEqual([form, "alice"]);
  await expect(as(`Bearer ${token} more`)).rejects.toThrow('must be "Bearer <token>"');
  await expect(as(`Token ${token}`)).rejects.toThrow('must be "Bearer <token>"');
  await expect(as(`Bearer ${token}é`)).rejects.toThrow("not valid");
  await expect(as(`Bearer ${token.slice(0, -1)}`)).rejects.toThrow("not valid");
});
