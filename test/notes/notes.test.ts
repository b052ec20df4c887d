import { afterAll, beforeAll, expect, test } from "bun:test";
import { startHearth, type Hearth } from "../harness.ts";

let h: Hearth;
let alice: string;
let bob: string;
beforeAll(async () => {
  h = await startHearth();
  alice = await h.token("alice");
  bob = await h.token("bob");
});
afterAll(() => h.stop());

test("add writes a note and an existing title is rewritten", async () => {
  const a = await h.call("notes/add", { title: "shopping", text: "milk" }, { token: alice });
  expect(a.status).toBe(200);
  expect(a.body.result).toMatchObject({ title: "shopping", text: "milk" });
  await h.call("notes/add", { title: "shopping", text: "milk, eggs" }, { token: alice });
  const g = await h.call("notes/get", { title: "shopping" }, { token: alice });
  expect(g.body.result.text).toBe("milk, eggs");
  const list = await h.call("notes/list", {}, { token: alice });
  expect(list.body.result.map((n: { title: string }) => n.title)).toEqual(["shopping"]);
});

test("list returns every note with its text, by title", async () => {
  await h.call("notes/add", { title: "alpha", text: "first" }, { token: alice });
  const list = await h.call("notes/list", {}, { token: alice });
  expect(list.body.result.map((n: { title: string; text: string }) => [n.title, n.text])).toEqual([
    ["alpha", "first"],
    ["shopping", "milk, eggs"],
  ]);
});

test("delete removes one note; a missing title is 404", async () => {
  expect((await h.call("notes/delete", { title: "alpha" }, { token: alice })).body.result).toEqual({ deleted: "alpha" });
  expect((await h.call("notes/get", { title: "alpha" }, { token: alice })).status).toBe(404);
  expect((await h.call("notes/delete", { title: "alpha" }, { token: alice })).status).toBe(404);
});

test("another account never sees or changes the caller's notes", async () => {
  expect((await h.call("notes/get", { title: "shopping" }, { token: bob })).status).toBe(404);
  expect((await h.call("notes/list", {}, { token: bob })).body.result).toEqual([]);
  expect((await h.call("notes/delete", { title: "shopping" }, { token: bob })).status).toBe(404);
  await h.call("notes/add", { title: "shopping", text: "bob's" }, { token: bob });
  expect((await h.call("notes/get", { title: "shopping" }, { token: alice })).body.result.text).toBe("milk, eggs");
});

test("rules: title required and non-empty, text required", async () => {
  const empty = await h.call("notes/add", { title: "", text: "x" }, { token: alice });
  expect(empty.status).toBe(400);
  expect(empty.body.error.field).toBe("title");
  const noText = await h.call("notes/add", { title: "x" }, { token: alice });
  expect(noText.body.error.field).toBe("text");
  const noTitle = await h.call("notes/get", {}, { token: alice });
  expect(noTitle.body.error.field).toBe("title");
});
