// Writing for the blog: the person's own posts beside the one being written, Markdown with
// a preview rendered as the published page will be, published (or kept
// private) with one button, edited and deleted with an Undo. A published
// post's page changes only when the person saves it, never mid-sentence. It
// calls only blog/list, blog/read, blog/create, blog/update and blog/delete.
import { call, confirm, Empty, Failure, formatDate, html, Loading, MarkdownEditor, navigate, SearchList, toast, undoable, useKeys, useParams, useQuery, useState } from "hearth/ui";

interface Summary {
  id: string;
  title: string;
  snippet: string;
  tags: string;
  author: string;
  private: boolean;
  url: string;
  created: string;
  updated: string;
}
interface Post extends Summary {
  content: string;
}

/** blog/create and blog/update refuse shorter content. */
const SHORTEST = 50;
const when = (iso: string) => formatDate(iso, { dateStyle: "medium", timeStyle: "short" });

export default function Posts() {
  const params = useParams();
  const open = params.get("open");
  const creating = params.has("new");
  const posts = useQuery<Summary[]>("blog/list", { limit: 1000, mine: true });
  const back = () => navigate({ open: null, new: null });
  useKeys([
    { key: "n", does: "New post", run: () => navigate({ new: "1", open: null }) },
    { key: "Escape", does: "Back to the list (on a phone)", run: back },
  ]);
  if (posts.data === undefined) return posts.error ? html`<${Failure} error=${posts.error} retry=${posts.reload} />` : html`<${Loading} label="Loading the posts…" />`;
  const editing = creating || open !== null;
  return html`<div class=${`split${editing ? " editing" : ""}`}>
    <section class="pane list" aria-label="Posts">
      <div class="row spread"><a href="/blog">Read the blog</a><button type="button" onClick=${() => navigate({ new: "1", open: null })} aria-keyshortcuts="n">New post</button></div>
      <${SearchList}
        items=${posts.data}
        label="Search posts"
        searchId="post-search"
        keyOf=${(p: Summary) => p.id}
        title=${(p: Summary) => p.title}
        detail=${(p: Summary) => `${p.private ? "Private" : "Published"} · ${when(p.created)} · ${p.author}`}
        text=${(p: Summary) => `${p.title} ${p.snippet} ${p.tags}`}
        selected=${open}
        onOpen=${(p: Summary) => navigate({ open: p.id, new: null })}
        empty=${html`<${Empty} title="No posts yet"><p>Write one with <strong>New post</strong> (or press <kbd>n</kbd>).</p></${Empty}>`}
      />
    </section>
    <section class="pane editor" aria-label="Post">
      ${
        creating
          ? html`<${Editor} key="new" post=${null} back=${back} />`
          : open !== null
            ? html`<${Opened} key=${open} id=${open} back=${back} />`
            : html`<${Empty} title="No post open"><p>Pick a post from the list, or write a new one.</p></${Empty}>`
      }
    </section>
  </div>`;
}

function Opened({ id, back }: { id: string; back: () => void }) {
  const post = useQuery<Post>("blog/read", { id });
  if (post.data === undefined) return post.error ? html`<${Failure} error=${post.error} retry=${post.reload} />` : html`<${Loading} />`;
  return html`<${Editor} key=${post.data.id} post=${post.data} back=${back} />`;
}

function Editor({ post, back }: { post: Post | null; back: () => void }) {
  const [title, setTitle] = useState(post?.title ?? "");
  const [tags, setTags] = useState(post?.tags ?? "");
  const [content, setContent] = useState(post?.content ?? "");
  const [hidden, setHidden] = useState(post?.private ?? false);
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<{ field?: string; message: string } | null>(null);
  const changed = post === null || title !== post.title || tags !== post.tags || content !== post.content;
  const short = content.trim().length < SHORTEST;
  const save = async () => {
    if (busy || short || !changed) return;
    setBusy(true);
    setRefusal(null);
    try {
      const args = { title: title.trim() || undefined, tags, content };
      const done = await call<Post>(post ? "blog/update" : "blog/create", post ? { id: post.id, ...args } : { ...args, private: hidden });
      toast(post ? "Saved" : done.private ? "Kept private" : `Published “${done.title}”`);
      navigate({ open: done.id, new: null }, { replace: post === null });
    } catch (e) {
      const err = e as { field?: string; message: string };
      setRefusal({ field: err.field, message: err.message });
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    if (!post) return back();
    if (!(await confirm({ title: `Delete “${post.title}”?`, message: "Its page goes at once; you can undo this for a few seconds after.", confirm: "Delete", danger: true }))) return;
    try {
      await call("blog/delete", { id: post.id });
    } catch (e) {
      return void toast(`Not deleted: ${(e as Error).message}`, { kind: "error" });
    }
    back();
    undoable(`Deleted “${post.title}”`, async () => {
      const again = await call<Post>("blog/create", { title: post.title, tags: post.tags, content: post.content, private: post.private });
      navigate({ open: again.id });
    });
  };
  useKeys([{ key: "Mod+s", does: post ? "Save changes" : "Publish", run: () => void save() }]);
  const note = (field: string) => (refusal && refusal.field === field ? html`<p class="alert">${refusal.message}</p>` : null);
  return html`<form class="post" onSubmit=${(e: Event) => (e.preventDefault(), void save())}>
    <div class="row spread toolbar">
      <button type="button" class="quiet back" onClick=${back}>← All posts</button>
      ${post && html`<a href=${post.url}>${post.private ? "Its page (only you)" : "Its page"}</a>`}
      <button type="button" class="quiet" onClick=${remove}>${post ? "Delete" : "Discard"}</button>
    </div>
    <label for="post-title">Title</label>
    <input id="post-title" type="text" class="title-field" value=${title} autoFocus=${post === null} aria-describedby="post-title-hint"
      onInput=${(e: Event) => setTitle((e.target as HTMLInputElement).value)} />
    <p class="hint" id="post-title-hint">Left empty, one is made from the post.</p>
    ${note("title")}
    <${MarkdownEditor} id="post-text" label="Post" value=${content} onInput=${setContent} rows=${16} />
    <p class="hint" role="status">${short ? `At least ${SHORTEST} characters: ${SHORTEST - content.trim().length} to go.` : post ? `Written ${when(post.created)}; changed ${when(post.updated)}.` : "Ready to publish."}</p>
    ${note("content")}
    <label for="post-tags">Tags</label>
    <input id="post-tags" type="text" value=${tags} placeholder="garden, food" onInput=${(e: Event) => setTags((e.target as HTMLInputElement).value)} />
    ${note("tags")}
    ${post === null
      ? html`<p><label><input type="checkbox" checked=${hidden} onChange=${(e: Event) => setHidden((e.target as HTMLInputElement).checked)} /> Private: only you see it</label></p>`
      : html`<p class="hint">${post.private ? "Private: only you see it." : "Published: anyone can read it on the blog."}</p>`}
    ${refusal && !["title", "content", "tags"].includes(refusal.field ?? "") ? html`<p class="alert" role="alert">${refusal.message}</p>` : null}
    <div class="row end"><button type="submit" disabled=${busy || short || !changed} aria-keyshortcuts="Control+S">${busy ? "Saving…" : post ? "Save changes" : hidden ? "Save privately" : "Publish"}</button></div>
  </form>`;
}
