// contacts/find through its trigram index (SQLite's FTS5 table, PostgreSQL's
// pg_trgm indexes) answers exactly as reading the whole address book did,
// and the index follows every way a contact changes.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findQuery } from "../../plugins/contacts/find.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { startPg } from "../pg.ts";

const pg = process.env.HEARTH_TEST_DB === "pg";
const dir = mkdtempSync(join(tmpdir(), "hearth-find-"));
let h: Hearth;
let alice: string;
let bob: string;
beforeAll(async () => {
  h = await startHearth({ dataDir: dir });
  alice = await h.token("alice");
  bob = await h.token("bob");
});
afterAll(async () => {
  await h.stop();
  rmSync(dir, { recursive: true, force: true });
});

const add = async (args: Record<string, unknown>, token = alice) => {
  const r = await h.call("contacts/add", args, { token });
  expect(r.status).toBe(200);
  return r.body.result as { id: string };
};
const names = async (query: string, token = alice) => {
  const r = await h.call("contacts/find", { query }, { token });
  expect(r.status).toBe(200);
  return (r.body.result as { name: string }[]).map((c) => c.name);
};

/**
 * What contacts/find answered before it had an index: the caller's contacts
 * read row by row with the same LIKEs. Each column is written `x || ''`, an
 * expression no index is on, so this reads the rows whatever the store.
 */
async function byScan(owner: string, query: string): Promise<string[]> {
  const q = query.trim().toLowerCase();
  const like = `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const d = q.replace(/\D/g, "");
  const byDigits = d.length >= 3 && d.length >= q.replace(/\s/g, "").length - 2;
  const rows = await h.rows<{ name: string }>(
    `SELECT name FROM contacts WHERE owner = ? AND ((name_key || '') LIKE ? ESCAPE '\\' OR lower(email || '') LIKE ? ESCAPE '\\' OR lower(other_emails || '') LIKE ? ESCAPE '\\'${byDigits ? " OR (phone_digits || '') LIKE ?" : ""}) ORDER BY name_key`,
    owner,
    like,
    like,
    like,
    ...(byDigits ? [`%${d}%`] : []),
  );
  return rows.map((r) => r.name);
}

const accountId = async (username: string) => (await h.row<{ id: string }>("SELECT id FROM accounts WHERE username = ?", username))!.id;

test("find answers as reading the whole address book did, for every kind of query", async () => {
  const people: Record<string, unknown>[] = [
    { name: "Ada Lovelace", email: "ada@example.org", phone: "+44 20 7946 0958" },
    { name: "Émile Zola", email: "Emile.Zola@Example.FR", phone: "(01) 42.36.80.00" },
    { name: "Zoë Ångström", emails: [{ value: "zoe@uu.se", type: "work" }, { value: "ZOE.ANGSTROM@home.example", type: "home" }] },
    { name: "Straße Müller", email: "müller@straße.de", phone: "030/1234-5678" },
    { name: "İsmail Çelik", phone: "+90 212 555 0101" },
    { name: "山田 太郎", email: "taro@example.jp", phone: "03-1234-5678" },
    { name: "O'Brien \"Bob\" 100%", email: "o_brien@example.ie", phone: "+353 1 555 0199" },
    { name: "Back\\slash", email: "back@slash.example" },
    { name: "Al", phone: "555 01 01" },
    { name: "Bo" },
    { name: "Ştefan 🎻 Enescu", emails: [{ value: "stefan@ro.example" }, { value: "enescu@ro.example" }, { value: "x@y.example" }] },
    // SQLite's lower() and LIKE fold ASCII alone, where the trigram index folds every letter: find keeps SQLite's answer.
    { name: "Fold Test", email: "ÉCOLE@Example.FR" },
    { name: "Jean-Luc Picard", email: "jl@enterprise.example", phone: "+1 (555) 010-1701" },
  ];
  for (const p of people) await add(p);
  // Another account's contacts share the index and never reach Alice's answers.
  await add({ name: "Ada Byron", email: "ada@example.org", phone: "+44 20 7946 0958" }, bob);
  await add({ name: "Émile Durkheim" }, bob);

  const queries = new Set<string>([
    "a", "A", "é", "É", "ü", "ß", "İ", "i", "山", "🎻", "%", "_", "\\", "'", '"', "-", "@", ".", "[", "[]", '","', '"]',
    "ad", "AD", "zo", "ZO", "ën", "30", "55", "01", " ", "l ",
    "ada", "ADA", "love", "lovelace", "émile", "ÉMILE", "EMILE", "emile.zola", "example.fr", "EXAMPLE", "zoë", "ZOË", "ångström", "ÅNGSTRÖM", "angstrom",
    "straße", "STRASSE", "müller", "MÜLLER", "straße.de", "i̇smail", "İSMAIL", "ismail", "çelik", "ÇELIK", "山田", "太郎", "山田 太郎", "taro@",
    "o'brien", '"bob"', "100%", "0%", "o_brien", "o_b", "back\\slash", "k\\s", "🎻 en", "ştefan", "ŞTEFAN", "enescu@", '"x@y', "x@y.example",
    "jean-luc", "luc pic", "enterprise", "zzz", "nobody here",
    "7946", "2079460958", "+44 20 7946 0958", "44 20", "(01) 42.36", "42.36.80.00", "4236", "030/1234", "1234-5678", "12345678", "555 0101", "5550101", "555 01 01",
    "(555) 010-1701", "0101", "1701", "+90", "212 555", "ada 2", "Ada Lovelace ", "  love  ",
  ]);
  // Every piece of every name, address and number, as a person types them.
  for (const p of people) {
    const texts = [p.name, p.email, p.phone, ...((p.emails as { value: string }[] | undefined) ?? []).map((e) => e.value)].filter((x): x is string => typeof x === "string");
    for (const t of texts) {
      const chars = [...t];
      for (const len of [1, 2, 3, 5]) for (let i = 0; i + len <= chars.length; i += 3) queries.add(chars.slice(i, i + len).join(""));
    }
  }
  const me = await accountId("alice");
  let compared = 0;
  for (const query of queries) {
    if (!query.trim()) continue;
    const want = await byScan(me, query);
    expect({ query, got: await names(query) }).toEqual({ query, got: want });
    compared++;
  }
  expect(compared).toBeGreaterThan(200);
  // The fixture is varied enough to say something: both matching and not.
  expect(await names("émile")).toEqual(["Émile Zola"]);
  expect(await names("ZOË")).toEqual(["Zoë Ångström"]);
  expect(await names("home.example")).toEqual(["Zoë Ångström"]);
  expect(await names("4236800")).toEqual(["Émile Zola"]);
  expect(await names("ada")).toEqual(["Ada Lovelace"]);
  expect(await names("COLE@example.fr")).toEqual(["Fold Test"]);
  if (!pg) expect(await names("école@")).toEqual([]);
});

test("the index follows every change: add, a changed address, a rename, CardDAV, delete", async () => {
  const c = await add({ name: "Grace Hopper", email: "grace@navy.example", phone: "+1 202 555 0143" });
  expect(await names("hopper")).toEqual(["Grace Hopper"]);
  expect(await names("navy.ex")).toEqual(["Grace Hopper"]);
  // A changed address and number replace the old in the index.
  await add({ name: "Grace Hopper", email: "amazing@cobol.example", phone: "+1 202 555 0199" });
  expect(await names("navy.ex")).toEqual([]);
  expect(await names("cobol")).toEqual(["Grace Hopper"]);
  expect(await names("2025550199")).toEqual(["Grace Hopper"]);
  expect(await names("2025550143")).toEqual([]);
  // Lists of addresses: the others are found, and gone once replaced.
  await add({ name: "Grace Hopper", emails: [{ value: "one@cobol.example" }, { value: "second@univac.example" }] });
  expect(await names("univac")).toEqual(["Grace Hopper"]);
  await add({ name: "Grace Hopper", emails: [{ value: "one@cobol.example" }] });
  expect(await names("univac")).toEqual([]);

  // A card from an address book, then renamed by the app: the new name is found, the old is not.
  const href = `${h.url}/dav/addressbooks/alice/contacts/`;
  const auth = { authorization: `Basic ${btoa(`alice:${alice}`)}` };
  const card = (fn: string) =>
    ["BEGIN:VCARD", "VERSION:3.0", "UID:find-test-1", `FN:${fn}`, `N:${fn};;;;`, "EMAIL;TYPE=INTERNET:kathy@orbit.example", "TEL;TYPE=CELL:+1 555 867 5309", "END:VCARD", ""].join("\r\n");
  const put = await fetch(`${href}find-test-1.vcf`, { method: "PUT", body: card("Katherine Johnson"), headers: { ...auth, "content-type": "text/vcard" } });
  expect(put.status).toBeLessThan(300);
  expect(await names("katherine")).toEqual(["Katherine Johnson"]);
  expect(await names("8675309")).toEqual(["Katherine Johnson"]);
  const renamed = await fetch(`${href}find-test-1.vcf`, { method: "PUT", body: card("Kathy Johnson"), headers: { ...auth, "content-type": "text/vcard" } });
  expect(renamed.status).toBeLessThan(300);
  expect(await names("katherine")).toEqual([]);
  expect(await names("kathy j")).toEqual(["Kathy Johnson"]);
  const gone = await fetch(`${href}find-test-1.vcf`, { method: "DELETE", headers: auth });
  expect(gone.status).toBeLessThan(300);
  expect(await names("kathy")).toEqual([]);
  expect(await names("orbit.example")).toEqual([]);

  expect((await h.call("contacts/delete", { id: c.id }, { token: alice })).status).toBe(200);
  expect(await names("hopper")).toEqual([]);
  expect(await names("cobol")).toEqual([]);
});

test("on SQLite, a find of three characters or more reads the trigram index, not the address book", async () => {
  if (pg) return;
  // On a connection of its own, closed after: a plan asked on the instance's reader could leave it holding its snapshot.
  const plan = (query: string) => {
    const { sql, params } = findQuery(h.rt.store.rdb, "someone", query).toSQL();
    const db = new Database(h.rt.store.reader.filename, { readonly: true });
    try {
      return (db.query(`EXPLAIN QUERY PLAN ${sql}`).all(...(params as string[])) as { detail: string }[]).map((r) => r.detail).join("\n");
    } finally {
      db.close();
    }
  };
  for (const q of ["ada lovelace", "émile", "7946 0958", "abc"]) {
    const p = plan(q);
    expect(p).toContain("SEARCH contacts USING INTEGER PRIMARY KEY (rowid=?)");
    // M: the match; > and <: the caller's range of rowids, so other accounts' entries are never read.
    expect(p).toMatch(/SCAN contacts_find VIRTUAL TABLE INDEX 0:M\d+></);
    expect(p).not.toContain("contacts_owner");
  }
  // Under three characters there is no trigram: the caller's own contacts are read, by the owner's index.
  expect(plan("ad")).toContain("contacts_owner");
});

test("on PostgreSQL, pg_trgm's indexes are on the expressions find tests", async () => {
  if (!pg) return;
  const idx = await h.rows<{ indexname: string; indexdef: string }>("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'contacts' AND indexname LIKE 'contacts_find_%' ORDER BY indexname");
  expect(idx.map((i) => i.indexname)).toEqual(["contacts_find_email", "contacts_find_name", "contacts_find_other_emails", "contacts_find_phone"]);
  for (const i of idx) expect(i.indexdef).toContain("gin_trgm_ops");
});

test("a store made before the index gets every contact it holds indexed", async () => {
  await add({ name: "Before Index", email: "before@old.example", phone: "+44 161 496 0000" });
  // Take the index away, as a store made before it was, and start again: the migration indexes what is there.
  if (pg) {
    await h.exec("DROP INDEX contacts_find_name");
    await h.exec("DROP INDEX contacts_find_email");
    await h.exec("DROP INDEX contacts_find_other_emails");
    await h.exec("DROP INDEX contacts_find_phone");
  } else {
    for (const t of ["contacts_find_insert", "contacts_find_delete", "contacts_find_update"]) await h.exec(`DROP TRIGGER ${t}`);
    await h.exec("DROP TABLE contacts_find");
    await h.exec("DROP TABLE contacts_find_owners");
  }
  await h.exec("DELETE FROM hearth_migrations WHERE owner = 'contacts' AND tag = '0003_find_index'");
  await h.stop();
  h = await startHearth({ dataDir: dir });
  alice = await h.token("alice");
  expect(await names("before@old")).toEqual(["Before Index"]);
  expect(await names("1614960000")).toEqual(["Before Index"]);
  expect(await names("ada lovelace")).toEqual(["Ada Lovelace"]);
  if (!pg) expect((await h.row<{ n: number }>("SELECT count(*) AS n FROM contacts_find WHERE contacts_find MATCH ?", '"before index"'))!.n).toBe(1);
});

test("on PostgreSQL, a role that may not add pg_trgm still migrates, and find answers the same without the indexes", async () => {
  if (!pg) return;
  const cluster = await startPg();
  const url = await cluster.database();
  const name = new URL(url).pathname.slice(1);
  const role = `nocreate_${name}`;
  await cluster.admin(`CREATE ROLE ${role} LOGIN`);
  // Tables in the schema, but no CREATE on the database, which a trusted extension needs.
  const owner = new SQL({ url, max: 1 });
  await owner.unsafe(`GRANT USAGE, CREATE ON SCHEMA public TO ${role}`);
  await owner.close();
  const u = new URL(url);
  u.username = role;
  const other = mkdtempSync(join(tmpdir(), "hearth-find-nocreate-"));
  const h2 = await startHearth({ dataDir: other, env: { HEARTH_DATABASE_URL: u.toString() } });
  try {
    const token = await h2.token("carol");
    for (const c of [{ name: "Ada Lovelace", email: "ada@example.org", phone: "+44 20 7946 0958" }, { name: "Émile Zola" }])
      expect((await h2.call("contacts/add", c, { token })).status).toBe(200);
    const find = async (query: string) => ((await h2.call("contacts/find", { query }, { token })).body.result as { name: string }[]).map((c) => c.name);
    expect(await find("love")).toEqual(["Ada Lovelace"]);
    expect(await find("2079460958")).toEqual(["Ada Lovelace"]);
    expect(await find("zola")).toEqual(["Émile Zola"]);
    expect(await h2.rows("SELECT indexname FROM pg_indexes WHERE tablename = 'contacts' AND indexname LIKE 'contacts_find_%'")).toEqual([]);
    expect(await h2.rows("SELECT extname FROM pg_extension WHERE extname = 'pg_trgm'")).toEqual([]);
  } finally {
    await h2.stop();
    rmSync(other, { recursive: true, force: true });
  }
});
