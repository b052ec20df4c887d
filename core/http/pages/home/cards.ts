// The home screen's cards. Each is one method called through dispatch as the
// signed-in person; a card appears only when its service is on this instance
// and has something to show now. Answers are read defensively: a service's
// shape may grow, and a card that cannot read its answer is left out rather
// than shown wrong.
import { dispatch } from "../../../dispatch.ts";
import { asHearthError } from "../../../errors.ts";
import type { Caller } from "../../../plugin.ts";
import type { Runtime } from "../../../runtime.ts";
import type { Prefs } from "./prefs.ts";

export interface Line {
  text: string;
  /** Muted detail after the text: a time, a change, a due date. */
  detail?: string;
  href?: string;
}

export interface Card {
  service: string;
  title: string;
  /** One sentence above the lines (today's conditions, the next prayer). */
  lead?: string;
  lines: Line[];
  href: string;
}

export interface Skipped {
  service: string;
  title: string;
  reason: string;
}

type O = Record<string, unknown>;
const obj = (v: unknown): O | null => (v && typeof v === "object" && !Array.isArray(v) ? (v as O) : null);
const str = (v: unknown): string | null => (typeof v === "string" && v.trim() ? v : null);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
/** The list in an answer: the answer itself, or its first array member (items, messages, headlines...). */
function listIn(result: unknown): O[] {
  if (Array.isArray(result)) return result.filter((x): x is O => !!obj(x));
  const o = obj(result);
  if (!o) return [];
  for (const v of Object.values(o)) if (Array.isArray(v)) return v.filter((x): x is O => !!obj(x));
  return [];
}

const LIMIT = 5;

/**
 * "Sat 21 Nov, 15:00" in the person's time zone (their place's, from the
 * forecast) when it is known; otherwise at the offset the time carries, and
 * in UTC (said so) when it carries none.
 */
function when(iso: string | null, zone: string | null): string | undefined {
  if (!iso) return undefined;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const style = { weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" } as const;
  if (zone) {
    try {
      return new Intl.DateTimeFormat("en-GB", { ...style, timeZone: zone }).format(d);
    } catch {
      // An unknown zone name: fall through to the time's own offset.
    }
  }
  const offset = /([+-])(\d\d):(\d\d)$/.exec(iso);
  const shift = offset ? (offset[1] === "-" ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3])) * 60_000 : 0;
  const text = new Intl.DateTimeFormat("en-GB", { ...style, timeZone: "UTC" }).format(new Date(d.getTime() + shift));
  return offset ? text : `${text} UTC`;
}

/** "Today", "Tomorrow" or the weekday of a local date, against the place's own local time now. */
function dayName(date: string | null, localNow: string | null): string {
  if (!date) return "";
  const today = localNow?.slice(0, 10);
  if (date === today) return "Today";
  if (today && Date.parse(`${date}T00:00:00Z`) - Date.parse(`${today}T00:00:00Z`) === 86_400_000) return "Tomorrow";
  const d = new Date(`${date}T12:00:00Z`);
  return Number.isNaN(d.getTime()) ? date : new Intl.DateTimeFormat("en-GB", { weekday: "long", timeZone: "UTC" }).format(d);
}

interface Source {
  service: string;
  method: string;
  title: string;
  /** The arguments for this person, or null when the card does not apply to them (no place set, not asked for). */
  args(p: Prefs, earlier: Map<string, unknown>): O | null;
  /** Other cards' answers this one uses (the weather's time zone for the prayer times). */
  after?: string[];
  /** What to show; `title` replaces the card's own when the answer changes what it is (latest mail rather than unread). */
  read(result: unknown, zone: string | null): (Omit<Card, "service" | "title" | "href"> & { title?: string }) | null;
}

const located = (p: Prefs) => p.lat !== null && p.lon !== null;

export const SOURCES: Source[] = [
  {
    service: "events",
    method: "list",
    title: "Next events",
    args: () => ({}),
    read: (r, zone) => ({ lines: listIn(r).slice(0, LIMIT).map((e) => ({ text: str(e.title) ?? "(untitled)", detail: when(str(e.next) ?? str(e.when), zone) })) }),
  },
  {
    service: "tasks",
    method: "list",
    title: "Open tasks",
    args: () => ({}),
    read: (r, zone) => ({
      lines: listIn(r)
        .filter((t) => t.status !== "done")
        .slice(0, LIMIT)
        .map((t) => ({ text: str(t.title) ?? "(untitled)", detail: [t.status === "doing" ? "doing" : null, str(t.due) ? `due ${when(str(t.due), zone)}` : null].filter(Boolean).join(", ") || undefined })),
    }),
  },
  {
    service: "mail",
    method: "inbox",
    title: "Unread mail",
    args: () => ({ limit: 20 }),
    read: (r, zone) => {
      const all = listIn(r);
      // Only messages the answer marks as unread; an inbox that does not say is shown as the latest few.
      const marked = all.some((m) => typeof m.read === "boolean" || typeof m.unread === "boolean" || typeof m.seen === "boolean");
      const unread = marked ? all.filter((m) => m.read === false || m.unread === true || m.seen === false) : all;
      return {
        title: marked ? "Unread mail" : "Latest mail",
        lines: unread.slice(0, LIMIT).map((m) => ({
          text: str(m.subject) ?? "(no subject)",
          detail: [str(m.from) ?? str(obj(m.from)?.address) ?? str(m.sender), when(str(m.date) ?? str(m.received) ?? str(m.at), zone)].filter(Boolean).join(", ") || undefined,
        })),
      };
    },
  },
  {
    service: "weather",
    method: "forecast",
    title: "Weather",
    args: (p) => (located(p) ? { lat: p.lat, lon: p.lon } : null),
    read: (r) => {
      const o = obj(r);
      const now = obj(o?.current);
      if (!now) return null;
      const days = listIn({ d: o?.days });
      const t = num(now.temperature_c);
      const lead = [str(now.conditions), t !== null ? `${Math.round(t)}°C` : null, num(now.feels_like_c) !== null ? `feels like ${Math.round(num(now.feels_like_c)!)}°C` : null]
        .filter(Boolean)
        .join(", ");
      return {
        lead: lead ? `Now: ${lead}.` : undefined,
        lines: days.slice(0, 3).map((d) => ({
          text: dayName(str(d.date), str(now.time)),
          detail: [str(d.conditions), num(d.high_c) !== null && num(d.low_c) !== null ? `${Math.round(num(d.low_c)!)}–${Math.round(num(d.high_c)!)}°C` : null, num(d.precipitation_chance_pct) ? `${d.precipitation_chance_pct}% rain` : null]
            .filter(Boolean)
            .join(", "),
        })),
      };
    },
  },
  {
    service: "prayer",
    method: "times",
    title: "Prayer times",
    after: ["weather"],
    args: (p, earlier) => {
      if (!p.prayer || !located(p)) return null;
      const tz = zoneOf(earlier);
      return { lat: p.lat, lon: p.lon, ...(tz ? { tz } : {}), ...(p.prayerMethod ? { method: p.prayerMethod } : {}) };
    },
    read: (r) => {
      const o = obj(r);
      const times = obj(o?.times);
      if (!times) return null;
      const next = obj(o?.next);
      const name = (k: string) => k[0].toUpperCase() + k.slice(1);
      return {
        lead: next && str(next.prayer) ? `Next: ${name(String(next.prayer))} at ${next.time}${next.tomorrow ? " tomorrow" : ""}.` : undefined,
        lines: Object.entries(times).map(([k, v]) => ({ text: name(k), detail: String(v) })),
      };
    },
  },
  {
    service: "news",
    method: "list",
    title: "Headlines",
    args: () => ({ limit: LIMIT }),
    read: (r) => ({
      lines: listIn(r)
        .slice(0, LIMIT)
        .map((n) => ({ text: str(n.title) ?? str(n.headline) ?? "", detail: str(n.source) ?? str(n.feed) ?? undefined, href: safeLink(str(n.url) ?? str(n.link)) }))
        .filter((l) => l.text),
    }),
  },
  {
    service: "markets",
    method: "list",
    title: "Markets",
    args: () => ({}),
    read: (r) => ({
      lines: listIn(r)
        .slice(0, LIMIT)
        .map((m) => {
          const price = num(m.price_usd) ?? num(m.price);
          const change = num(m.change_24h_pct) ?? num(m.change_pct);
          return {
            text: `${str(m.name) ?? str(m.symbol) ?? ""}${str(m.symbol) && str(m.name) ? ` (${m.symbol})` : ""}`,
            detail: [price !== null ? `$${price.toLocaleString("en-US", { maximumFractionDigits: price < 10 ? 4 : 2 })}` : null, change !== null ? `${change >= 0 ? "+" : ""}${change}%` : null]
              .filter(Boolean)
              .join(" "),
          };
        })
        .filter((l) => l.text),
    }),
  },
];

/** Links from an answer are followed only when they are plain web addresses. */
function safeLink(u: string | null): string | undefined {
  if (!u) return undefined;
  try {
    const url = new URL(u);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** Where a card leads: the service's own page when it has one, else its part of /services. */
export function serviceLink(rt: Runtime, service: string): string {
  const p = rt.registry.plugins.get(service);
  if (p?.def.routes?.some((r) => r.method === "GET" && r.path === `/${service}`)) return `/${service}`;
  return `/services#service-${service}`;
}

/** A card's call may take this long; past it the page is served without that card (its provider's answer is still cached for next time). */
export const CARD_WAIT_MS = 2500;

/** A card whose call outlasted CARD_WAIT_MS: not a fault of the service, so not logged as one. */
class Late extends Error {}

function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Late(`no answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** The person's time zone: their place's, as the forecast names it. */
function zoneOf(results: Map<string, unknown>): string | null {
  return str(obj(obj(results.get("weather"))?.location)?.timezone);
}

/** Every card that has something to show, in the order above, and the ones that failed with why. */
export async function gatherCards(rt: Runtime, caller: Caller, prefs: Prefs, baseUrl: string): Promise<{ cards: Card[]; skipped: Skipped[] }> {
  const results = new Map<string, unknown>();
  const pending = new Map<string, Promise<unknown>>();
  // Every call first, at once; answers are read after, when the person's zone is known.
  const called = await Promise.all(
    SOURCES.map(async (s): Promise<{ s: Source; result: unknown } | Skipped | null> => {
      if (!rt.registry.get(s.service, s.method)) return null;
      for (const dep of s.after ?? []) await pending.get(dep)?.catch(() => {});
      const args = s.args(prefs, results);
      if (!args) return null;
      const call = within(dispatch(rt, { service: s.service, method: s.method, args, caller, requestId: crypto.randomUUID(), baseUrl }), CARD_WAIT_MS);
      pending.set(s.service, call);
      try {
        const result = await call;
        results.set(s.service, result);
        return { s, result };
      } catch (e) {
        if (e instanceof Late) return { service: s.service, title: s.title, reason: e.message };
        const err = asHearthError(e);
        if (caller.ambient && err.kind === "forbidden") return { service: s.service, title: s.title, reason: "it costs credits, and this page was opened from another site: reload it to see this card" };
        if (err.kind === "internal") rt.log.error("home card failed", { service: s.service, error: String((e as Error)?.stack ?? e) });
        return { service: s.service, title: s.title, reason: err.message };
      }
    }),
  );
  const zone = zoneOf(results);
  const cards: Card[] = [];
  const skipped: Skipped[] = [];
  for (const o of called) {
    if (!o) continue;
    if ("reason" in o) {
      skipped.push(o);
      continue;
    }
    const { s, result } = o;
    let read: ReturnType<Source["read"]>;
    try {
      read = s.read(result, zone);
    } catch (e) {
      rt.log.error("home card unreadable", { service: s.service, error: String((e as Error)?.stack ?? e) });
      continue;
    }
    if (!read || (read.lines.length === 0 && !read.lead)) continue;
    cards.push({ service: s.service, href: serviceLink(rt, s.service), ...read, title: read.title ?? s.title });
  }
  return { cards, skipped };
}
