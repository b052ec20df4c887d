import { Type as T } from "@sinclair/typebox";
import { and, asc, count, desc, eq, gt, max } from "drizzle-orm";
import { invalid, notFound, ownership, definePlugin, read, write, type Ctx, escapeHtml, notFoundPage, publicPage as page } from "hearth";
import { eventStream, hubFor, type LiveMessage } from "./live.ts";
import { messages, rooms } from "./schema.ts";

type Message = typeof messages.$inferSelect;

// Messages are public to the room; what ownership fixes is who they are from: always the caller.
const authored = ownership<Message>({ what: "message", ownerColumn: messages.author, ownerOf: (m) => m.author, isPublic: () => true });

const DAY = 24 * 60 * 60 * 1000;
const HISTORY = 50;
const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** "#Garden Club" -> "garden-club"; anything that does not become a slug is a 400. */
function slug(room: string): string {
  const s = room.trim().replace(/^#+/, "").toLowerCase().replace(/[\s_]+/g, "-");
  if (!SLUG.test(s)) throw invalid("room", `room must be a slug of letters, digits and hyphens, up to 63 characters (got ${JSON.stringify(room)})`);
  return s;
}

const shape = (m: Message): LiveMessage => ({ id: m.id, room: m.room, author: m.authorName, content: m.content, at: new Date(m.at).toISOString() });
const Room = T.String({ minLength: 1, maxLength: 64, description: 'The room id, a slug such as "general" (as rooms lists it).' });

async function recent(ctx: Ctx, room: string, limit: number, after = 0): Promise<LiveMessage[]> {
  const rows = await ctx.db
    .select()
    .from(messages)
    .where(after ? and(eq(messages.room, room), gt(messages.id, after)) : eq(messages.room, room))
    .orderBy(desc(messages.id))
    .limit(limit)
    .all();
  return rows.reverse().map(shape);
}

const roomExists = async (ctx: Ctx, room: string) => !!(await ctx.db.select({ room: rooms.room }).from(rooms).where(eq(rooms.room, room)).get());

export default definePlugin({
  name: "chat",
  description: "Public chat rooms: post as yourself, read the recent conversation, follow a room live.",
  screens: { chat: { title: "Chat", module: "screens/chat.ts", order: 30, reads: [{ method: "rooms", args: { limit: 100 } }] } },
  needs: ["db", "emit", "broadcast", "lock", "afterCommit"],
  config: {
    HEARTH_CHAT_LIVE_MAX: { default: "1000", description: "Most live connections (/chat/<room>/live) open at once; more are refused with 503." },
  },
  // Listens from the start, so a message posted on another instance reaches this one's listeners from their first moment.
  start(ctx) {
    hubFor(ctx.config, ctx.broadcast);
  },
  methods: {
    send: write({
      description: "Posts a message in a room as the caller (1 to 4,000 characters). The room is created by its first message.",
      args: T.Object({
        room: Room,
        content: T.String({ minLength: 1, maxLength: 4000, description: "The message, 1 to 4,000 characters." }),
      }),
      access: "account",
      outbound: true,
      async run(args, ctx) {
        const room = slug(args.room);
        if (args.content.trim() === "") throw invalid("content", "content must not be blank");
        const now = ctx.clock.now().getTime();
        const author = authored.owner(ctx.caller);
        const started = await ctx.db.insert(rooms).values({ room, creator: author, created: now }).onConflictDoNothing().returning().all();
        // One message of a room at a time: ids then commit in the order they were given, so a listener
        // resuming after an id (Last-Event-ID) never skips one that committed later with a smaller id.
        await ctx.lock(`room:${room}`);
        const m = await ctx.db
          .insert(messages)
          .values({ room, author, authorName: ctx.account.username, content: args.content, at: now })
          .returning()
          .get();
        if (started.length)
          await ctx.emit({ type: "room.started", text: `${ctx.account.username} started the chat room #${room}`, url: `${ctx.baseUrl}/chat/${room}`, data: { ref: room } });
        const out = shape(m);
        // Delivered once the transaction has committed, and only if it did.
        const hub = hubFor(ctx.config, ctx.broadcast);
        await ctx.afterCommit(() => hub.publish(out));
        return out;
      },
    }),
    rooms: read({
      description: "Rooms with messages in the last 24 hours, busiest first.",
      args: T.Object({ limit: T.Integer({ minimum: 1, maximum: 100, default: 20, description: "How many rooms (default 20, max 100)." }) }),
      access: "public",
      untrusted: true,
      async run({ limit }, ctx) {
        const since = ctx.clock.now().getTime() - DAY;
        const n = count();
        const last = max(messages.at);
        const rows = await ctx.db
          .select({ room: messages.room, messages: n, last })
          .from(messages)
          .where(gt(messages.at, since))
          .groupBy(messages.room)
          .orderBy(desc(n), desc(last), asc(messages.room))
          .limit(limit)
          .all();
        return rows.map((r) => ({ room: r.room, messages: r.messages, last_message_at: new Date(r.last ?? 0).toISOString(), url: `${ctx.baseUrl}/chat/${r.room}` }));
      },
    }),
    messages: read({
      description: "A room's recent conversation (its latest 50 messages), oldest to newest. Without `room`, the room with the latest message.",
      args: T.Object({ room: T.Optional(Room) }),
      access: "public",
      untrusted: true,
      async run(args, ctx) {
        if (args.room === undefined) {
          const latest = await ctx.db.select({ room: messages.room }).from(messages).orderBy(desc(messages.id)).limit(1).get();
          if (!latest) throw notFound("no chat room has any messages yet");
          return recent(ctx, latest.room, HISTORY);
        }
        const room = slug(args.room);
        if (!(await roomExists(ctx, room))) throw notFound(`no chat room ${JSON.stringify(room)}`);
        return recent(ctx, room, HISTORY);
      },
    }),
  },
  routes: [
    {
      method: "GET",
      path: "/chat/:room/live",
      async run(req, ctx) {
        const room = ctx.params.room;
        if (!SLUG.test(room) || !(await roomExists(ctx, room))) return new Response("no such chat room", { status: 404, headers: { "content-type": "text/plain;charset=utf-8" } });
        const hub = hubFor(ctx.config, ctx.broadcast);
        if (hub.count >= Number(ctx.config.HEARTH_CHAT_LIVE_MAX || 1000))
          return new Response("too many live connections; try again shortly", { status: 503, headers: { "retry-after": "30", "content-type": "text/plain;charset=utf-8" } });
        // A reconnecting EventSource says where it got to; a new one may ask with ?since=<id>.
        const since = Number(req.headers.get("last-event-id") ?? new URL(req.url).searchParams.get("since") ?? "");
        const backlog = Number.isSafeInteger(since) && since > 0 ? recent(ctx, room, 200, since) : Promise.resolve([]);
        return eventStream(hub, room, backlog);
      },
    },
    {
      method: "GET",
      path: "/chat/:room",
      async run(_req, ctx) {
        const room = ctx.params.room;
        if (!SLUG.test(room) || !(await roomExists(ctx, room))) return notFoundPage("There is no chat room at this address.");
        const list = await recent(ctx, room, 100);
        const item = (m: LiveMessage) =>
          `<li><strong>${escapeHtml(m.author)}</strong> <small><time datetime="${m.at}">${m.at.slice(11, 16)}</time></small><br>${escapeHtml(m.content)}</li>`;
        return page({
          title: `#${room}`,
          body: `<main><h1>#${escapeHtml(room)}</h1><ol id="messages" class="posts" aria-live="polite">${list.map(item).join("\n")}</ol></main>`,
          // Appends each live message as text: nothing from a message is ever parsed as HTML.
          script: `(()=>{const ol=document.getElementById("messages");const es=new EventSource(location.pathname+"/live?since=${list.at(-1)?.id ?? 0}");
es.addEventListener("message",e=>{const m=JSON.parse(e.data);const li=document.createElement("li");const b=document.createElement("strong");b.textContent=m.author;
const t=document.createElement("small");t.textContent=" "+m.at.slice(11,16);li.append(b,t,document.createElement("br"),document.createTextNode(m.content));ol.append(li);});})();`,
        });
      },
    },
  ],
});
