import { Type as T } from "@sinclair/typebox";
import { and, asc, eq, sql } from "drizzle-orm";
import { scopesText, newId, newSecret, forbidden, invalid, notFound, definePlugin, read, write, type Ctx, type FiringRecord, formatTime, indexAtOrAfter, occurrence, occurrencesBetween, parseTime, REPEATS, spansBetween, type Recurrence } from "hearth";
import { eventsCalendar } from "./dav.ts";
import { fireEvent } from "./fire.ts";
import { freeSlots, type Interval } from "./free.ts";
import { renderCalendar } from "./ics.ts";
import { eventFeeds, events } from "./schema.ts";
import { eventOffsetAt, zoneOfTime } from "./zone.ts";
import { eventsCard } from "./card.ts";
import { ruleSummary } from "./rule.ts";

type Row = typeof events.$inferSelect;

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const MAX_WINDOW_DAYS = 90;
const HISTORY_SHOWN = 5;

const Minutes = (description: string) => T.Optional(T.Integer({ minimum: 1, maximum: 1440, default: 30, description }));
const Repeat = T.Union(
  REPEATS.map((r) => T.Literal(r)),
  { description: "hourly, daily, weekly or monthly; omit for once. Monthly on the 29th-31st falls on the last day of shorter months." },
);

/**
 * The caller's events that may still have an occurrence ending after `at`:
 * every repeating one, and the single ones ending after it, each read from
 * an index of its own (events_repeating, events_owner_end in schema.ts), so a
 * calendar's years of past events are not read to find the next few.
 */
export const stillOn = (db: Ctx["db"], owner: string, at: number) => [
  db.select().from(events).where(and(eq(events.owner, owner), sql`(${events.repeat} IS NOT NULL OR ${events.rule} IS NOT NULL)`)),
  db.select().from(events).where(and(eq(events.owner, owner), sql`(${events.start} + ${events.minutes} * 60000) > ${at}`)),
] as const;

async function eventsOnAfter(ctx: Ctx, at: number): Promise<Row[]> {
  const [repeating, ending] = stillOn(ctx.db, ctx.account.id, at);
  const rows = await repeating.all();
  for (const e of await ending.all()) if (e.repeat === null && e.rule === null) rows.push(e);
  return rows;
}

const recurrence = (e: Row): Recurrence => ({ start: e.start, offset: e.offset, repeat: e.repeat ?? null, tz: e.tz, rule: e.rule });
/** An instant in the event's local time: in its zone's offset at that instant, or its fixed offset. */
const local = (e: Row, at: number) => formatTime(at, eventOffsetAt(e, at));

function time(field: string, text: string) {
  const t = parseTime(text);
  if (!t.ok) throw invalid(field, `${field} ${t.reason}`);
  return t;
}

function historyEntry(h: FiringRecord, e: Row) {
  const entry: Record<string, unknown> = { at: local(e, h.due), status: h.status };
  if (h.status === "missed") {
    entry.count = h.count;
    entry.until = local(e, (h.detail as { last: number }).last);
    entry.reason = (h.detail as { interrupted?: boolean }).interrupted
      ? "the instance running it stopped mid-firing and none took it over within the grace window, so it was not run again late"
      : "the instance was down past the grace window, so this was not replayed late";
  } else if (h.status === "claimed") entry.note = "started, not finished: still running, or the instance running it stopped mid-firing (then it is run again once that instance's claim on it runs out)";
  else if (h.detail !== null) entry.outcome = h.detail;
  return entry;
}

async function shape(e: Row, next: number | null, ctx: Ctx, withHistory: boolean) {
  const out: Record<string, unknown> = {
    id: e.id,
    title: e.title,
    when: formatTime(e.start, e.offset),
    tz: e.tz,
    note: e.note,
    minutes: e.minutes,
    repeat: e.repeat ?? null,
    prompt: e.prompt ?? null,
    next: next === null ? null : local(e, next),
    ends: next === null ? null : local(e, next + e.minutes * MIN),
  };
  // A calendar app's series says more than repeat can: the whole rule, and which occurrences it leaves out, moves or cancels.
  if (e.rule) Object.assign(out, ruleSummary(e.rule));
  if (withHistory) out.history = (await ctx.schedule.history(e.id, HISTORY_SHOWN)).map((h) => historyEntry(h, e));
  return out;
}

function feedUrls(ctx: Ctx, key: string) {
  const url = `${ctx.baseUrl}/events/${key}.ics`;
  return { url, webcal: url.replace(/^https?:/, "webcal:") };
}

function graceMs(ctx: Ctx): number {
  const m = Number(ctx.config.EVENTS_GRACE_MINUTES);
  if (Number.isFinite(m) && m >= 0) return m * MIN;
  ctx.log.warn("EVENTS_GRACE_MINUTES is not a number of minutes; using 10", { value: ctx.config.EVENTS_GRACE_MINUTES });
  return 10 * MIN;
}

/** What decides when an event fires. */
const timing = (e: Pick<Row, "start" | "offset" | "repeat" | "tz" | "rule">) => JSON.stringify([e.start, e.offset, e.repeat, e.tz, e.rule]);

/**
 * events/create with an id: the event becomes what the call describes, as a
 * new one would be, but keeps its id, when it was made and its firing
 * history. At the same times its schedule stays as it is (an occurrence that
 * already fired does not fire again); at new ones it fires from the new start.
 * A calendar app's fuller rule stays while the start and repeat are its own.
 */
async function replaceEvent(id: string, args: { title: string; note?: string; minutes?: number; repeat?: Row["repeat"]; prompt?: string }, when: ReturnType<typeof time>, ctx: Ctx) {
  const before = await ctx.db.select().from(events).where(and(eq(events.id, id), eq(events.owner, ctx.account.id))).get();
  if (!before) throw notFound(`no event with id "${id}"`);
  const repeat = args.repeat ?? null;
  const sameTimes = when.at === before.start && when.offset === before.offset && repeat === (before.repeat ?? null);
  const next: Row = {
    ...before,
    title: args.title,
    note: args.note ?? "",
    start: when.at,
    offset: when.offset,
    minutes: args.minutes ?? 30,
    repeat,
    tz: sameTimes ? before.tz : zoneOfTime(ctx.config, when),
    rule: sameTimes ? before.rule : null,
    prompt: args.prompt ?? null,
    scopes: scopesText(ctx.caller.scopes),
  };
  await ctx.db.update(events).set(next).where(eq(events.id, id)).run();
  const scopes = ctx.caller.scopes === "*" ? "*" : [...new Set([...ctx.caller.scopes, "mail"])];
  const firing =
    timing(next) === timing(before)
      ? ((await ctx.schedule.next(id)) ?? null)
      : await ctx.schedule.set({ ref: id, start: next.start, offset: next.offset, repeat: next.repeat, tz: next.tz, rule: next.rule, scopes });
  return await shape(next, firing, ctx, false);
}

export default definePlugin({
  name: "events",
  card: eventsCard,
  description:
    "A calendar of events and reminders that fire on time, optionally repeating and optionally running a prompt through the agent. Calendar apps can subscribe to it: POST /events/feed (signed in) gives its secret iCalendar address.",
  needs: ["db", "schedule", "call"],
  // Reminders go out by mail and prompts run through the agent, when the instance has them.
  requires: ["mail?", "agent?"],
  // Repeating events keep their local time in the instance's zone (zone.ts).
  settings: ["HEARTH_TZ", "TZ"],
  screens: { events: { title: "Calendar", module: "screens/calendar.ts", order: 30, reads: [{ method: "list" }] } },
  config: {
    EVENTS_GRACE_MINUTES: {
      default: "10",
      description: "Firings missed while the instance was down run once on start if missed by less than this many minutes; older ones are recorded as missed.",
    },
  },
  methods: {
    create: write({
      description:
        "Schedules a reminder or event at `when` (RFC 3339 with an offset), optionally repeating at the same local time: in the instance's time zone (HEARTH_TZ, shown as `tz`) when `when` carries that zone's offset, so daylight-saving changes keep it at that hour; otherwise in the fixed offset given, optionally running `prompt` through the agent when it fires (the answer is mailed to you). Returns the event with its id and next firing time.",
      args: T.Object({
        title: T.String({ minLength: 1, maxLength: 500, description: "What it is." }),
        when: T.String({ minLength: 1, maxLength: 64, description: "Start, RFC 3339 with an offset: 2026-11-21T09:00:00+01:00." }),
        note: T.Optional(T.String({ maxLength: 10_000, description: "Anything to remember with it." })),
        minutes: Minutes("Duration in minutes, 1-1440 (default 30)."),
        repeat: T.Optional(Repeat),
        prompt: T.Optional(T.String({ minLength: 1, maxLength: 10_000, description: "An instruction run through the agent each time it fires." })),
        // Beyond the spec (README, "Additions to the spec"): an event moved or edited keeps its id, as a calendar app's change does over CalDAV.
        id: T.Optional(
          T.String({
            minLength: 1,
            maxLength: 64,
            description: "An event's id, from events/list: that event becomes what this call describes, keeping its id and what already fired.",
          }),
        ),
      }),
      access: "account",
      async run(args, ctx) {
        const when = time("when", args.when);
        if (args.id !== undefined) return await replaceEvent(args.id, args, when, ctx);
        const row: Row = {
          id: newId(),
          owner: ctx.account.id,
          title: args.title,
          note: args.note ?? "",
          start: when.at,
          offset: when.offset,
          minutes: args.minutes ?? 30,
          repeat: args.repeat ?? null,
          tz: zoneOfTime(ctx.config, when),
          rule: null,
          prompt: args.prompt ?? null,
          scopes: scopesText(ctx.caller.scopes),
          created: ctx.clock.now().getTime(),
        };
        await ctx.db.insert(events).values(row).run();
        // Reminders are mailed to the owner even when the token that made the event was scoped to events alone.
        const scopes = ctx.caller.scopes === "*" ? "*" : [...new Set([...ctx.caller.scopes, "mail"])];
        const next = await ctx.schedule.set({ ref: row.id, start: row.start, offset: row.offset, repeat: row.repeat, tz: row.tz, scopes });
        return await shape(row, next, ctx, false);
      },
    }),
    delete: write({
      description: "Cancels one of your events by id (from events/list). Withheld from the agent: only a person or a program may call it.",
      args: T.Object({ id: T.String({ minLength: 1, maxLength: 64, description: "The event's id, from events/list." }) }),
      access: "account",
      destructive: true,
      withheldFromAgent: true,
      async run({ id }, ctx) {
        const gone = await ctx.db
          .delete(events)
          .where(and(eq(events.id, id), eq(events.owner, ctx.account.id)))
          .returning({ id: events.id })
          .all();
        if (gone.length === 0) throw notFound(`no event with id "${id}"`);
        await ctx.schedule.remove(id);
        return { deleted: id };
      },
    }),
    list: read({
      description:
        "Your upcoming events and reminders, soonest first, each with its id; a repeating event shows its next occurrence, and each shows what its recent firings did.",
      args: T.Object({}),
      access: "account",
      async run(_args, ctx) {
        const now = ctx.clock.now().getTime();
        const rows = await eventsOnAfter(ctx, now);
        const upcoming: { e: Row; next: number }[] = [];
        for (const e of rows) {
          // The current occurrence stays listed until it ends.
          const k = indexAtOrAfter(recurrence(e), now - e.minutes * MIN + 1);
          if (k !== null) upcoming.push({ e, next: occurrence(recurrence(e), k) });
        }
        upcoming.sort((a, b) => a.next - b.next || a.e.created - b.e.created);
        return await Promise.all(upcoming.map(({ e, next }) => shape(e, next, ctx, true)));
      },
    }),
    free: read({
      description:
        "Open slots at least `minutes` long within working hours (`day_start`..`day_end`, hours in the offset of `from`) between `from` (default now) and `to` (default a week later, at most 90 days), where none of your events, repeats included, is booked.",
      args: T.Object({
        from: T.Optional(T.String({ maxLength: 64, description: "RFC 3339 with an offset; default now (UTC)." })),
        to: T.Optional(T.String({ maxLength: 64, description: "RFC 3339 with an offset; default one week after from." })),
        minutes: Minutes("Slot length in minutes, 1-1440 (default 30)."),
        day_start: T.Optional(T.Integer({ minimum: 0, maximum: 23, default: 9, description: "Working day starts at this hour, 0-23 (default 9)." })),
        day_end: T.Optional(T.Integer({ minimum: 1, maximum: 24, default: 18, description: "Working day ends at this hour, 1-24 (default 18); after day_start." })),
      }),
      access: "account",
      async run(args, ctx) {
        const dayStart = args.day_start ?? 9;
        const dayEnd = args.day_end ?? 18;
        if (dayStart >= dayEnd) throw invalid("day_end", `day_end (${dayEnd}) must be later than day_start (${dayStart})`);
        const from = args.from !== undefined ? time("from", args.from) : { at: Math.ceil(ctx.clock.now().getTime() / MIN) * MIN, offset: 0 };
        const to = args.to !== undefined ? time("to", args.to).at : from.at + 7 * DAY;
        if (to <= from.at) throw invalid("to", "to must be later than from");
        if (to - from.at > MAX_WINDOW_DAYS * DAY) throw invalid("to", `the window from from to to may be at most ${MAX_WINDOW_DAYS} days (got ${((to - from.at) / DAY).toFixed(1)})`);
        const minutes = args.minutes ?? 30;
        const busy: Interval[] = [];
        for (const e of await eventsOnAfter(ctx, from.at)) busy.push(...spansBetween(recurrence(e), from.at, to, e.minutes * MIN));
        const slots = freeSlots(busy, { from: from.at, to, minutes, dayStart, dayEnd, offset: from.offset });
        return {
          from: formatTime(from.at, from.offset),
          to: formatTime(to, from.offset),
          minutes,
          slots: slots.map((s) => ({ start: formatTime(s.start, from.offset), end: formatTime(s.end, from.offset), minutes: Math.floor((s.end - s.start) / MIN) })),
        };
      },
    }),
  },
  dav: eventsCalendar,
  routes: [
    {
      // The feed's address is a secret for a person to paste into a calendar app, so it is handed out here
      // rather than as an API method: the agent never sees it, and the API stays the published one.
      method: "POST",
      path: "/events/feed",
      async run(req, ctx) {
        if (ctx.caller.agent) throw forbidden("the calendar feed address is withheld from the agent");
        const owner = ctx.account.id;
        const body = (await req.text()).trim();
        let rotate = new URL(req.url).searchParams.get("rotate") === "true";
        if (body) {
          let parsed: unknown;
          try {
            parsed = JSON.parse(body);
          } catch {
            throw invalid("body", "the body must be JSON, like {\"rotate\": true}, or empty");
          }
          const r = (parsed as { rotate?: unknown } | null)?.rotate;
          if (r !== undefined && typeof r !== "boolean") throw invalid("rotate", "rotate must be true or false");
          rotate ||= r === true;
        }
        const now = ctx.clock.now().getTime();
        // The feed, made if missing, in one statement: several calls at once make it once and each gets its address.
        const made = newSecret();
        const feed = await ctx.db
          .insert(eventFeeds)
          .values({ owner, key: made, created: now })
          .onConflictDoUpdate({ target: eventFeeds.owner, set: { owner: sql`excluded.owner` } })
          .returning()
          .get();
        const existed = feed.key !== made;
        let key = feed.key;
        if (existed && rotate) {
          key = newSecret();
          await ctx.db.update(eventFeeds).set({ key, created: now }).where(eq(eventFeeds.owner, owner)).run();
        }
        return Response.json({ result: { ...feedUrls(ctx, key), rotated: existed && rotate } });
      },
    },
    {
      method: "GET",
      path: "/events/:file",
      async run(req, ctx) {
        const file = ctx.params.file ?? "";
        const key = file.endsWith(".ics") ? file.slice(0, -4) : "";
        const feed = key ? await ctx.db.select().from(eventFeeds).where(eq(eventFeeds.key, key)).get() : undefined;
        if (!feed) throw notFound("no calendar at this address");
        const rows = await ctx.db.select().from(events).where(eq(events.owner, feed.owner)).orderBy(asc(events.start)).all();
        const host = new URL(ctx.baseUrl || req.url).host;
        const body = renderCalendar({ name: `Events on ${host}`, host, events: rows, now: ctx.clock.now().getTime() });
        return new Response(body, {
          headers: { "content-type": "text/calendar; charset=utf-8", "cache-control": "private, max-age=300", "content-disposition": 'inline; filename="events.ics"' },
        });
      },
    },
  ],
  async start(ctx) {
    // resume: a firing taken over after its reminder was mailed still runs its prompt (fireEvent skips the reminder).
    await ctx.schedule.handle(fireEvent, { grace: graceMs(ctx), resume: true });
  },
});
