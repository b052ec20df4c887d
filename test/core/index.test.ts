// ctx.index through a real runtime, on whichever store it runs (HEARTH_TEST_DB=pg for PostgreSQL):
// replace by ref, remove, batches, owners and services, and what readers across services ask of it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { indexFor as storeIndex } from "../../core/db/fts.ts";
import { startHearth, type Hearth } from "../harness.ts";

let h: Hearth;
beforeAll(async () => {
  h = await startHearth();
});
afterAll(() => h.stop());

const indexFor = (service: string) => storeIndex(h.rt.store, service, false);

test("put replaces the entry with the same kind and ref; remove deletes it", async () => {
  const ix = indexFor("alpha");
  await ix.put({ kind: "doc", ref: "1", owner: "u1", title: "Garden plans", body: "tomatoes and beans" });
  await ix.put({ kind: "doc", ref: "1", owner: "u1", title: "Garden plans", body: "courgettes only" });
  expect(await ix.search({ query: "tomatoes" })).toEqual([]);
  const hits = await ix.search({ query: "courgette" });
  expect(hits.map((x) => [x.service, x.kind, x.ref, x.owner])).toEqual([["alpha", "doc", "1", "u1"]]);
  await ix.remove("doc", "1");
  expect(await ix.search({ query: "courgettes" })).toEqual([]);
  await ix.remove("doc", "1");
});

test("a batch lands whole; owners and services partition the results", async () => {
  const a = indexFor("alpha");
  const b = indexFor("beta");
  await a.putMany(Array.from({ length: 500 }, (_, i) => ({ kind: "item", ref: String(i), owner: i % 2 ? "u1" : null, title: `lantern ${i}`, body: "brass" })));
  await b.put({ kind: "item", ref: "x", owner: null, title: "lantern from beta", body: "" });
  expect((await a.search({ query: "lantern", limit: 1000 })).length).toBe(500);
  expect((await a.search({ query: "lantern", owner: "public", limit: 1000 })).length).toBe(250);
  expect((await a.search({ query: "lantern", owner: "u1", limit: 1000 })).every((x) => x.owner === "u1")).toBe(true);
  expect((await b.search({ query: "lantern" })).map((x) => x.ref)).toEqual(["x"]);
  const everywhere = await a.search({ query: "lantern beta", services: "*", owner: "public" });
  expect(everywhere.map((x) => x.service)).toEqual(["beta"]);
  expect((await a.search({ query: "lantern", services: ["alpha", "beta"], owner: "public", limit: 1000 })).length).toBe(251);
});

test("queries are taken as words, never as FTS syntax", async () => {
  const ix = indexFor("gamma");
  await ix.put({ kind: "k", ref: "1", owner: null, title: 'quotes "and" stars', body: "NEAR OR AND" });
  for (const q of ['"', "*", "a OR", "NEAR(", "-", "title:x", ")))"]) expect(await ix.search({ query: q })).toBeArray();
  expect((await ix.search({ query: "stars)" })).length).toBe(1);
});

test("recent entries by kind, counts across services and the refs indexed, without reading the index's tables", async () => {
  const ix = indexFor("delta");
  const other = indexFor("epsilon");
  for (const ref of ["a", "b", "c"]) await ix.put({ kind: "post", ref, owner: null, title: `title ${ref}`, body: "x".repeat(1000) });
  await ix.put({ kind: "post", ref: "mine", owner: "u1", title: "private", body: "" });
  await ix.put({ kind: "post", ref: "a", owner: null, title: "title a again", body: "short" });
  await other.put({ kind: "post", ref: "z", owner: null, title: "elsewhere", body: "" });
  // Latest put first, public only, this service's; a body is its first 600 characters.
  const recent = await ix.recent({ kind: "post", limit: 10 });
  expect(recent.map((e) => [e.ref, e.title])).toEqual([["a", "title a again"], ["c", "title c"], ["b", "title b"]]);
  expect(recent[1].body.length).toBe(600);
  expect((await ix.recent({ kind: "post", service: "epsilon", limit: 10 })).map((e) => e.ref)).toEqual(["z"]);
  const count = async () => Object.fromEntries((await ix.counts()).filter((r) => r.kind === "post").map((r) => [r.service, r.n]));
  expect(await count()).toEqual({ delta: 3, epsilon: 1 });
  // Counts follow removals and new entries.
  await ix.remove("post", "b");
  expect(await count()).toEqual({ delta: 2, epsilon: 1 });
  await other.put({ kind: "post", ref: "y", owner: null, title: "more", body: "" });
  expect(await count()).toEqual({ delta: 2, epsilon: 2 });
  expect([...(await ix.indexed("post"))].sort()).toEqual(["a", "c", "mine"]);
  expect([...(await other.indexed("post"))].sort()).toEqual(["y", "z"]);
});
