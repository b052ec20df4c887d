// The lists that would answer with everything a person ever stored, read in
// pages through HTTP: every record exactly once and in the list's order while
// records are added between pages, a bad limit or cursor refused naming it,
// and a caller who sends neither getting the plain list as before, up to the cap.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { PAGE_CAP } from "../../core/paging.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

let h: Hearth;
let alice: string;
let bob: string;
const clock = new TestClock();

beforeAll(async () => {
  h = await startHearth({ clock });
  alice = await h.token("alice");
  bob = await h.token("bob");
});
afterAll(() => h.stop());

interface PagedList {
  method: string;
  /** Adds the record numbered n for the caller and returns the key its list shows it by. */
  add(n: number, token: string): Promise<string>;
  /** A listed record's key. */
  key(item: Record<string, unknown>): string;
}

const lists: PagedList[] = [
  {
    method: "notes/list",
    async add(n, token) {
      const r = await h.call("notes/add", { title: `note ${String(n).padStart(3, "0")}`, text: `text ${n}` }, { token });
      expect(r.status).toBe(200);
      return r.body.result.title;
    },
    key: (i) => i.title as string,
  },
  {
    method: "contacts/list",
    async add(n, token) {
      // Names out of order, so the list's order is not the order they were added in.
      const r = await h.call("contacts/add", { name: `Person ${(n * 7919) % 1000}-${n}`, email: `p${n}@example.com` }, { token });
      expect(r.status).toBe(200);
      return r.body.result.id;
    },
    key: (i) => i.id as string,
  },
  {
    method: "files/list",
    async add(n, token) {
      // Every third file at the same moment as the one before: ties are ordered by id, and a page may end inside them.
      if (n % 3 !== 0) clock.advance(1000);
      const r = await h.call("files/put", { name: `file-${n}.txt`, content: `content ${n}` }, { token });
      expect(r.status).toBe(200);
      return r.body.result.id;
    },
    key: (i) => i.id as string,
  },
  {
    method: "tasks/list",
    async add(n, token) {
      // Open ones due at a few times or none, and some done: the list's order has four parts to its key.
      const due = n % 4 === 0 ? {} : { due: `2027-0${1 + (n % 3)}-01 09:00` };
      const r = await h.call("tasks/create", { title: `task ${n}`, ...due }, { token });
      expect(r.status).toBe(200);
      if (n % 5 === 0) {
        clock.advance(500);
        expect((await h.call("tasks/update", { id: r.body.result.id, status: "done" }, { token })).status).toBe(200);
      }
      return r.body.result.id;
    },
    key: (i) => i.id as string,
  },
];

async function page(method: string, args: Record<string, unknown>, token = alice) {
  const r = await h.call(method, args, { token });
  expect(r.status).toBe(200);
  return r.body.result as { items: Record<string, unknown>[]; cursor?: string };
}

for (const list of lists) {
  test(`${list.method}: pages hold every record once, in the list's order, while records are added between pages`, async () => {
    const before = new Set<string>();
    for (let n = 0; n < 23; n++) before.add(await list.add(n, alice));
    // Another account's records are never in the caller's pages.
    const theirs = new Set([await list.add(500, bob), await list.add(501, bob)]);

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    let added = 100;
    do {
      const p = await page(list.method, { limit: 4, ...(cursor ? { cursor } : {}) });
      expect(p.items.length).toBeLessThanOrEqual(4);
      if (p.cursor) expect(p.items.length).toBe(4);
      seen.push(...p.items.map(list.key));
      cursor = p.cursor;
      // Two more between pages: one may sort before the cursor, one after; neither may repeat or displace a record.
      await list.add(added++, alice);
      await list.add(added++, alice);
      pages++;
    } while (cursor && pages < 100);
    expect(cursor).toBeUndefined();

    expect(new Set(seen).size).toBe(seen.length);
    for (const k of before) expect(seen).toContain(k);
    for (const k of theirs) expect(seen).not.toContain(k);
    // In the list's own order: the order the whole list, read in one call now, gives them.
    const whole = ((await h.call(list.method, {}, { token: alice })).body.result as Record<string, unknown>[]).map(list.key);
    expect(whole.filter((k) => seen.includes(k))).toEqual(seen);
  });

  test(`${list.method}: a caller without limit or cursor gets the plain list, as before`, async () => {
    const r = await h.call(list.method, {}, { token: alice });
    expect(r.status).toBe(200);
    expect(Array.isArray(r.body.result)).toBe(true);
    const p = await page(list.method, { limit: PAGE_CAP });
    expect(p.cursor).toBeUndefined();
    expect(p.items).toEqual(r.body.result);
  });

  test(`${list.method}: a bad limit or cursor is a 400 naming the field`, async () => {
    for (const limit of [0, -1, PAGE_CAP + 1, "many", 2.5]) {
      const r = await h.call(list.method, { limit }, { token: alice });
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe("limit");
    }
    // Not base64url; not JSON; JSON of the wrong shape; a cursor of a list keyed otherwise.
    const wrongShape = Buffer.from(JSON.stringify({ after: 1 })).toString("base64url");
    const otherList = Buffer.from(JSON.stringify(list.method === "notes/list" || list.method === "contacts/list" ? [1, "x"] : ["x"])).toString("base64url");
    for (const cursor of ["not a cursor!", Buffer.from("{oops").toString("base64url"), wrongShape, otherList]) {
      const r = await h.call(list.method, { cursor }, { token: alice });
      expect(r.status).toBe(400);
      expect(r.body.error.kind).toBe("invalid_argument");
      expect(r.body.error.field).toBe("cursor");
    }
  });
}

test(`notes/list without a limit answers at most ${PAGE_CAP} notes; pages read the rest`, async () => {
  const carol = await h.token("carol");
  const id = (await h.row<{ id: string }>("SELECT id FROM accounts WHERE username = ?", "carol"))!.id;
  const values = Array.from({ length: PAGE_CAP + 5 }, (_, i) => `('${id}', 'bulk ${String(i).padStart(5, "0")}', 'x', 0, 0)`);
  await h.exec(`INSERT INTO notes (owner, title, text, created, updated) VALUES ${values.join(",")}`);
  const whole = await h.call("notes/list", {}, { token: carol });
  expect(whole.body.result.length).toBe(PAGE_CAP);
  const first = await page("notes/list", { limit: PAGE_CAP }, carol);
  expect(first.items).toEqual(whole.body.result);
  const rest = await page("notes/list", { limit: PAGE_CAP, cursor: first.cursor }, carol);
  expect(rest.items.map((n) => n.title)).toEqual(["bulk 01000", "bulk 01001", "bulk 01002", "bulk 01003", "bulk 01004"]);
  expect(rest.cursor).toBeUndefined();
});

test("over MCP the same lists take limit and cursor, their schemas from the same declaration", async () => {
  const rpc = async (method: string, params: Record<string, unknown>) => {
    const res = await fetch(`${h.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${alice}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    return ((await res.json()) as { result: any }).result;
  };
  const tools = (await rpc("tools/list", {})).tools as { name: string; inputSchema: { properties: Record<string, { type?: string; maximum?: number }> } }[];
  for (const name of ["notes_list", "contacts_list", "files_list", "tasks_list"]) {
    const tool = tools.find((t) => t.name === name)!;
    expect(tool.inputSchema.properties.limit).toMatchObject({ type: "integer", maximum: PAGE_CAP });
    expect(tool.inputSchema.properties.cursor).toMatchObject({ type: "string" });
  }
  const first = await rpc("tools/call", { name: "notes_list", arguments: { limit: 2 } });
  expect(first.isError).toBeFalsy();
  const page1 = first.structuredContent.result as { items: { title: string }[]; cursor: string };
  expect(page1.items.length).toBe(2);
  const second = await rpc("tools/call", { name: "notes_list", arguments: { limit: 2, cursor: page1.cursor } });
  const page2 = second.structuredContent.result as { items: { title: string }[] };
  expect(page2.items[0].title > page1.items[1].title).toBe(true);
});
