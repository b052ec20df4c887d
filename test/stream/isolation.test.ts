// Two accounts side by side on docs, files, blog, chat and stream: each one's
// private records never reach the other (or a stranger) on any method or page,
// and neither can change the other's records.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

let h: Hearth;
const clock = new TestClock();
const tokens: Record<string, string> = {};

beforeAll(async () => {
  h = await startHearth({ clock });
  tokens.alice = await h.token("alice");
  tokens.bob = await h.token("bob");
});
afterAll(() => h.stop());

interface Owned {
  secret: string;
  doc: any;
  file: any;
  post: any;
}

async function makePrivateRecords(user: string): Promise<Owned> {
  const token = tokens[user];
  const secret = `${user}secretmarker`;
  const call = async (path: string, args: Record<string, unknown>) => {
    clock.advance(1000);
    const r = await h.call(path, args, { token });
    expect(r.status).toBe(200);
    return r.body.result;
  };
  const doc = await call("docs/write", { title: `${secret} doc`, content: `${secret} body` });
  const file = await call("files/put", { name: `${secret}.txt`, content: `${secret} file` });
  const post = await call("blog/create", { title: `${secret} post`, content: `${secret} ${"private words that pad this post. ".repeat(3)}`, private: true });
  // Public activity alongside, so the stream is not empty when checked.
  await call("chat/send", { room: `${user}-room`, content: `${user} says hello` });
  await call("blog/create", { title: `${user} public post`, content: "A public post that anyone may read, long enough to count." });
  return { secret, doc, file, post };
}

test("private records never cross between accounts, on any method or page", async () => {
  const alice = await makePrivateRecords("alice");
  const bob = await makePrivateRecords("bob");

  for (const [viewer, owner] of [
    ["bob", alice],
    ["alice", bob],
    ["stranger", alice],
    ["stranger", bob],
  ] as const) {
    const token = tokens[viewer];
    const seen: string[] = [];
    // Answers are collected to be searched for the owner's secret, except where the question itself held it (an echo is no leak).
    const call = async (path: string, args: Record<string, unknown> = {}) => {
      const r = await h.call(path, args, { token });
      if (!JSON.stringify(args).includes(owner.secret)) seen.push(JSON.stringify(r.body));
      return r;
    };
    const page = async (url: string) => {
      const res = await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : undefined);
      seen.push(await res.text());
      return res.status;
    };
    const refused = token ? 404 : 401;

    // docs
    expect((await call("docs/list")).status).toBe(token ? 200 : 401);
    expect((await call("docs/list", { query: owner.secret.slice(0, -6) })).status).toBe(token ? 200 : 401);
    expect((await call("docs/read", { id: owner.doc.id })).status).toBe(refused);
    expect((await call("docs/read", { title: `${owner.secret} doc` })).status).toBe(refused);
    expect((await call("docs/write", { id: owner.doc.id, title: "taken", content: "taken" })).status).toBe(refused);
    expect((await call("docs/delete", { id: owner.doc.id })).status).toBe(refused);
    expect(await page(`${h.url}/docs/${owner.doc.id}`)).toBe(404);

    // files
    expect((await call("files/list")).status).toBe(token ? 200 : 401);
    expect((await call("files/get", { id: owner.file.id })).status).toBe(refused);
    const share = await fetch(`${owner.file.url}/share`, { method: "POST", headers: token ? { authorization: `Bearer ${token}` } : {} });
    expect(share.status).toBe(refused);
    seen.push(await share.text());
    expect((await call("files/delete", { id: owner.file.id })).status).toBe(refused);
    expect(await page(owner.file.url)).toBe(404);

    // blog
    expect((await call("blog/list")).status).toBe(200);
    expect((await call("blog/read", { id: owner.post.id })).status).toBe(404);
    expect((await call("blog/read", { title: owner.secret.slice(0, -6) })).status).toBe(404);
    expect((await call("blog/update", { id: owner.post.id, title: "taken" })).status).toBe(refused);
    expect((await call("blog/delete", { id: owner.post.id })).status).toBe(refused);
    expect((await call("blog/delete", { title: owner.secret.slice(0, -6) })).status).toBe(refused);
    expect(await page(`${h.url}/blog`)).toBe(200);
    expect(await page(`${h.url}/blog/feed.xml`)).toBe(200);
    expect(await page(owner.post.url)).toBe(404);

    // chat and stream: public by nature, and carry nothing private
    expect((await call("chat/rooms")).status).toBe(200);
    expect((await call("chat/messages", { room: "alice-room" })).status).toBe(200);
    const stream = await call("stream/list", { limit: 100 });
    expect(stream.body.result.length).toBeGreaterThan(0);

    const everything = seen.join("\n");
    expect(everything).not.toContain(owner.secret);
  }

  // Nothing was changed by the attempts: each owner still has exactly their own records.
  for (const [user, own, other] of [
    ["alice", alice, bob],
    ["bob", bob, alice],
  ] as const) {
    const token = tokens[user];
    const docs = (await h.call("docs/list", {}, { token })).body.result;
    expect(docs.map((d: any) => d.id)).toEqual([own.doc.id]);
    expect(docs[0].title).toBe(`${own.secret} doc`);
    const files = (await h.call("files/list", {}, { token })).body.result;
    expect(files.map((f: any) => f.id)).toEqual([own.file.id]);
    expect(files[0].share_url).toBeNull();
    const posts = (await h.call("blog/list", {}, { token })).body.result;
    expect(posts.some((p: any) => p.id === own.post.id && p.title === `${own.secret} post`)).toBe(true);
    expect(JSON.stringify(posts)).not.toContain(other.secret);
    expect((await fetch(own.file.url, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await fetch(`${h.url}/blog/${own.post.id}`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  }
});
