// The drive reached from the Files screen: with the person's session cookie
// and its CSRF token, as the API is. Another site's page cannot use the
// session there: its Origin makes the cookie count for no one, a write without
// the token is refused, the drive's OPTIONS allows no origin (so a browser
// never sends another site's MOVE at all) and the cookie is SameSite. A
// signed-out page is not shown the browser's password box.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { signUp, type Signed } from "../auth/people.ts";
import { startHearth, type Hearth } from "../harness.ts";

let h: Hearth;
let erin: Signed;
let token: string;

beforeAll(async () => {
  h = await startHearth({ env: { HEARTH_SIGNUP: "open", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" } });
  erin = await signUp(h, "erin");
  token = await h.token("erin");
});
afterAll(() => h.stop());

const drive = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
  fetch(`${h.url}/files/dav${path}`, { method, headers: { cookie: erin.cookie, "x-csrf-token": erin.csrf, "sec-fetch-site": "same-origin", ...headers }, body });
const listed = async () => (await h.call("files/list", {}, { token })).body.result.map((f: { name: string; folder: string }) => `${f.folder}/${f.name}`).sort();

test("the page's session makes, moves, renames and deletes on the drive; a file keeps its id, address and content", async () => {
  const put = await h.call("files/put", { name: "plan.md", content: "# Plan" }, { token, method: "POST" });
  const file = put.body.result;
  expect(file.folder).toBe("");
  expect((await drive("MKCOL", "/Garden/")).status).toBe(201);
  expect((await drive("MOVE", "/plan.md", { destination: `${h.url}/files/dav/Garden/beds.md`, overwrite: "F" })).status).toBe(201);
  const moved = (await h.call("files/get", { id: file.id }, { token })).body.result;
  expect([moved.folder, moved.name, moved.content, moved.url]).toEqual(["Garden", "beds.md", "# Plan", file.url]);
  expect(await (await fetch(file.url, { headers: { cookie: erin.cookie } })).text()).toBe("# Plan");
  // A name taken is refused unless replacing is asked for: the screen asks the person first.
  await h.call("files/put", { name: "seeds.md", content: "seeds" }, { token, method: "POST" });
  const taken = await drive("MOVE", "/seeds.md", { destination: `${h.url}/files/dav/Garden/beds.md`, overwrite: "F" });
  expect(taken.status).toBe(412);
  expect(await listed()).toEqual(["/seeds.md", "Garden/beds.md"]);
  // A folder moves with what it holds, in one step.
  expect((await drive("MKCOL", "/Archive/")).status).toBe(201);
  expect((await drive("MOVE", "/Garden/", { destination: `${h.url}/files/dav/Archive/Garden/`, overwrite: "F" })).status).toBe(201);
  expect(await listed()).toEqual(["/seeds.md", "Archive/Garden/beds.md"]);
  expect((await drive("DELETE", "/Archive/")).status).toBe(204);
  expect(await listed()).toEqual(["/seeds.md"]);
});

test("another site's page cannot use the session on the drive", async () => {
  const before = await listed();
  // Its Origin makes the cookie count for no one, even with the token.
  const foreign = await drive("MKCOL", "/Evil/", { origin: "https://evil.example", "sec-fetch-site": "cross-site" });
  expect(foreign.status).toBe(401);
  // Without the session's CSRF token, a write resting on the cookie is refused.
  const bare = await fetch(`${h.url}/files/dav/Evil/`, { method: "MKCOL", headers: { cookie: erin.cookie } });
  expect(bare.status).toBe(403);
  expect((await drive("PROPFIND", "/Evil/", { depth: "0" })).status).toBe(404);
  // A browser asks first before another site's MOVE, and the answer allows no origin, so it is never sent.
  const preflight = await fetch(`${h.url}/files/dav/seeds.md`, {
    method: "OPTIONS",
    headers: { origin: "https://evil.example", "access-control-request-method": "MOVE", "access-control-request-headers": "destination, x-csrf-token" },
  });
  expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
  expect(preflight.headers.get("access-control-allow-methods")).toBeNull();
  expect(erin.setCookie).toContain("SameSite=Lax");
  expect(erin.setCookie).toContain("HttpOnly");
  expect(await listed()).toEqual(before);
});

test("a signed-out page is answered 401 without the Basic challenge that would open the browser's password box; a file manager still gets it", async () => {
  const page = await fetch(`${h.url}/files/dav/`, { method: "PROPFIND", headers: { depth: "1", "x-csrf-token": "stale" } });
  expect(page.status).toBe(401);
  expect(page.headers.get("www-authenticate") ?? "").not.toContain("Basic");
  const manager = await fetch(`${h.url}/files/dav/`, { method: "PROPFIND", headers: { depth: "1" } });
  expect(manager.status).toBe(401);
  expect(manager.headers.get("www-authenticate")).toContain("Basic");
});
