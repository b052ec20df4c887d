// The home screen's cards: each plugin's `card` (its manifest) names one of
// its methods, called through dispatch as the signed-in person, and how to
// read the answer. A card appears only when its service is on this instance
// and has something to show now; one that cannot read its answer is left out
// rather than shown wrong.
import { dispatch } from "../../../dispatch.ts";
import { asHearthError } from "../../../errors.ts";
import type { CardBody, CardDef, CardLine, Caller } from "../../../plugin.ts";
import type { Runtime } from "../../../runtime.ts";
import type { Prefs } from "./prefs.ts";

export type Line = CardLine;

export interface Card extends CardBody {
  service: string;
  title: string;
  href: string;
}

export interface Skipped {
  service: string;
  title: string;
  reason: string;
}

export interface CardSource {
  service: string;
  card: CardDef;
}

/** Every card on this instance, in the order the plugins ask for. */
export function cardSources(rt: Runtime): CardSource[] {
  return [...rt.registry.plugins.values()]
    .filter((p) => p.def.card)
    .map((p) => ({ service: p.def.name, card: p.def.card! }))
    .sort((a, b) => (a.card.order ?? 100) - (b.card.order ?? 100) || a.service.localeCompare(b.service));
}

/** The values a card's `choice` argument offers (a union of literals), and the one it uses when none is chosen. */
export function choicesOf(rt: Runtime, s: CardSource): { names: string[]; usual: string } | null {
  if (!s.card.choice) return null;
  const m = (rt.registry.get(s.service, s.card.method)?.def.args.properties as Record<string, { anyOf?: { const?: unknown }[]; default?: unknown }> | undefined)?.[s.card.choice.arg];
  const names = (m?.anyOf ?? []).map((o) => o.const).filter((v): v is string => typeof v === "string");
  return names.length ? { names, usual: typeof m!.default === "string" ? m!.default : names[0] } : null;
}

/** Links from an answer are followed only when they are plain web addresses. */
function safeLink(u: string | undefined): string | undefined {
  if (!u) return undefined;
  try {
    const url = new URL(u);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** A card's answer read by its plugin, kept to strings and safe links; null when it has nothing to show or cannot be read. */
export function readCard(rt: Runtime, s: CardSource, result: unknown, zone: string | null): CardBody | null {
  let body: CardBody | null;
  try {
    body = s.card.render(result, { zone });
  } catch (e) {
    rt.log.error("home card unreadable", { service: s.service, error: String((e as Error)?.stack ?? e) });
    return null;
  }
  if (!body || !Array.isArray(body.lines)) return null;
  const text = (v: unknown) => (typeof v === "string" && v ? v : undefined);
  const lines = body.lines
    .filter((l) => l && typeof l.text === "string")
    .map((l) => ({ text: l.text, detail: text(l.detail), href: safeLink(text(l.href)) }));
  return { title: text(body.title), lead: text(body.lead), lines };
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

/** Every card that has something to show, in order, and the ones that failed with why. */
export async function gatherCards(rt: Runtime, caller: Caller, prefs: Prefs, baseUrl: string): Promise<{ cards: Card[]; skipped: Skipped[] }> {
  const sources = cardSources(rt).filter((s) => rt.registry.get(s.service, s.card.method) && (!s.card.optIn || prefs.cards[s.service]?.on));
  const place = prefs.lat !== null && prefs.lon !== null ? { name: prefs.place, lat: prefs.lat, lon: prefs.lon } : null;
  // The person's time zone, from the cards that know it, for the cards that wait for it.
  let zone: string | null = null;
  const zoneCalls: Promise<unknown>[] = [];
  // Every call first, at once; answers are read after, when the person's zone is known.
  const ask = async (s: CardSource): Promise<{ s: CardSource; result: unknown } | Skipped | null> => {
    if (s.card.needsZone) await Promise.all(zoneCalls);
    const args = s.card.args ? s.card.args({ place, zone }) : {};
    if (!args) return null;
    const chosen = s.card.choice ? prefs.cards[s.service]?.choice : undefined;
    if (chosen) args[s.card.choice!.arg] = chosen;
    const call = within(dispatch(rt, { service: s.service, method: s.card.method, args, caller, requestId: crypto.randomUUID(), baseUrl, surface: "page" }), CARD_WAIT_MS);
    if (s.card.zone) zoneCalls.push(call.then((r) => (zone ??= safeZone(s, r)), () => null));
    try {
      return { s, result: await call };
    } catch (e) {
      if (e instanceof Late) return { service: s.service, title: s.card.title, reason: e.message };
      const err = asHearthError(e);
      if (caller.ambient && err.kind === "forbidden") return { service: s.service, title: s.card.title, reason: "it costs credits, and this page was opened from another site: reload it to see this card" };
      if (err.kind === "internal") rt.log.error("home card failed", { service: s.service, error: String((e as Error)?.stack ?? e) });
      return { service: s.service, title: s.card.title, reason: err.message };
    }
  };
  // The cards that tell the zone are asked first, so those waiting for it find their calls.
  const called = new Map<CardSource, ReturnType<typeof ask>>();
  for (const s of [...sources.filter((x) => x.card.zone), ...sources.filter((x) => !x.card.zone)]) called.set(s, ask(s));
  const answered = await Promise.all(sources.map((s) => called.get(s)!));
  const cards: Card[] = [];
  const skipped: Skipped[] = [];
  for (const o of answered) {
    if (!o) continue;
    if ("reason" in o) {
      skipped.push(o);
      continue;
    }
    const read = readCard(rt, o.s, o.result, zone);
    if (!read || (read.lines.length === 0 && !read.lead)) continue;
    cards.push({ service: o.s.service, href: serviceLink(rt, o.s.service), ...read, title: read.title ?? o.s.card.title });
  }
  return { cards, skipped };
}

function safeZone(s: CardSource, result: unknown): string | null {
  try {
    const z = s.card.zone!(result);
    return typeof z === "string" && z ? z : null;
  } catch {
    return null;
  }
}
