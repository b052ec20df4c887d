// ctx.index through a real runtime: replace by ref, remove, batches, owners and services.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { makeIndex } from "../../core/db/fts.ts";
import { startHearth, type Hearth } from "../harness.ts";

let h: Hearth;
beforeAll(async () => {
  h = await startHearth();
});
afterAll(() => h.stop());

const indexFor = (service: string) => makeIndex(service, () => h.rt.store.writer, () => h.rt.store.reader);

test("put replaces the entry with the same kind and ref; remove deletes it", () => {
  const ix = indexFor("alpha");
  ix.put({ kind: "doc", ref: "1", owner: "u1", title: "Garden plans", body: "tomatoes and beans" });
  ix.put({ kind: "doc", ref: "1", owner: "u1", title: "Garden plans", body: "courgettes only" });
  expect(ix.search({ query: "tomatoes" })).toEqual([]);
  const hits = ix.search({ query: "courgette" });
  expect(hits.map((x) => [x.service, x.kind, x.ref, x.owner])).toEqual([["alpha", "doc", "1", "u1"]]);
  ix.remove("doc", "1");
  expect(ix.search({ query: "courgettes" })).toEqual([]);
  ix.remove("doc", "1");
});

test("a batch lands whole; owners and services partition the results", () => {
  const a = indexFor("alpha");
  const b = indexFor("beta");
  a.putMany(Array.from({ length: 500 }, (_, i) => ({ kind: "item", ref: String(i), owner: i % 2 ? "u1" : null, title: `lantern ${i}`, body: "brass" })));
  b.put({ kind: "item", ref: "x", owner: null, title: "lantern from beta", body: "" });
  expect(a.search({ query: "lantern", limit: 1000 }).length).toBe(500);
  expect(a.search({ query: "lantern", owner: "public", limit: 1000 }).length).toBe(250);
  expect(a.search({ query: "lantern", owner: "u1", limit: 1000 }).every((x) => x.owner === "u1")).toBe(true);
  expect(b.search({ query: "lantern" }).map((x) => x.ref)).toEqual(["x"]);
  const everywhere = a.search({ query: "lantern beta", services: "*", owner: "public" });
  expect(everywhere.map((x) => x.service)).toEqual(["beta"]);
  expect(a.search({ query: "lantern", services: ["alpha", "beta"], owner: "public", limit: 1000 }).length).toBe(251);
});

test("queries are taken as words, never as FTS syntax", () => {
  const ix = indexFor("gamma");
  ix.put({ kind: "k", ref: "1", owner: null, title: "quotes \"and\" stars", body: "NEAR OR AND" });
  for (const q of ['"', "*", "a OR", "NEAR(", "-", "title:x", ")))"]) expect(() => ix.search({ query: q })).not.toThrow();
  expect(ix.search({ query: "stars)" }).length).toBe(1);
});
