// The search across everything a person has: each plugin's `find` (its own
// read method, called as the person through dispatch, with the same scopes
// and checks as any call) asked at once, the answers read by the plugin and
// put together by service. The header's search and /my/search show it.
import { findSession, sessionCaller } from "../auth/sessions.ts";
import { dispatch } from "../dispatch.ts";
import { PAGE_CAP } from "../paging.ts";
import { asHearthError, unauthenticated } from "../errors.ts";
import { html, message, page } from "../http/pages/layout.ts";
import { errorResponse, jsonResponse } from "../http/respond.ts";
import type { Caller, FoundItem } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { appNav } from "./nav.ts";
import { APP_CSP, toSignIn } from "./shell.ts";

export interface Found {
  service: string;
  title: string;
  items: FoundItem[];
  /** Why this service's search failed, when it did; the others are shown all the same. */
  error?: string;
}

const PER_SERVICE = 8;
const QUERY_MAX = 200;
/** A path on this instance, never another site (a plugin reads what a stranger may have written). */
const local = (href: unknown) => typeof href === "string" && href.startsWith("/") && !href.startsWith("//") && !href.includes("\\\\");

/** A paged list read to its end, as a screen reads it (callAll in core/ui): without pages it stops at its first thousand. */
async function everyPage(args: Record<string, unknown>, ask: (args: Record<string, unknown>) => Promise<unknown>): Promise<unknown[]> {
  const items: unknown[] = [];
  let cursor: string | undefined;
  do {
    const page = (await ask({ ...args, limit: PAGE_CAP, ...(cursor && { cursor }) })) as { items: unknown[]; cursor?: string };
    items.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return items;
}

export async function findAll(rt: Runtime, caller: Caller, query: string, baseUrl: string): Promise<Found[]> {
  const q = query.trim().slice(0, QUERY_MAX);
  if (!q) return [];
  const sources = [...rt.registry.plugins.values()].filter((p) => p.def.find && (caller.scopes === "*" || caller.scopes.includes(p.def.name)));
  const found = await Promise.all(
    sources.map(async (p): Promise<Found> => {
      const f = p.def.find!;
      try {
        const ask = (args: Record<string, unknown>) => dispatch(rt, { service: p.def.name, method: f.method, args, caller, requestId: crypto.randomUUID(), baseUrl, surface: "page" });
        const result = f.all ? await everyPage(f.args(q), ask) : await ask(f.args(q));
        const items = f
          .read(result, q)
          .filter((i) => i && typeof i.title === "string" && local(i.href))
          .slice(0, PER_SERVICE)
          .map((i) => ({ title: i.title || "Untitled", href: i.href, ...(typeof i.detail === "string" && i.detail ? { detail: i.detail } : {}) }));
        return { service: p.def.name, title: f.title, items };
      } catch (e) {
        return { service: p.def.name, title: f.title, items: [], error: asHearthError(e).message };
      }
    }),
  );
  return found.filter((f) => f.items.length || f.error).sort((a, b) => a.title.localeCompare(b.title));
}

/** GET /my/find?q=: what the header's search lists as the person types. */
export async function findJson(rt: Runtime, req: Request): Promise<Response> {
  const rid = crypto.randomUUID();
  const s = await findSession(rt, req);
  if (!s) return errorResponse(unauthenticated("sign in to search"), rid);
  const url = new URL(req.url);
  return jsonResponse(200, { result: await findAll(rt, sessionCaller(s), url.searchParams.get("q") ?? "", url.origin) }, rid);
}

/** GET /my/search?q=: the same, as a page (the header's form without script, or Enter on "all results"). */
export async function searchPage(rt: Runtime, req: Request): Promise<Response> {
  const s = await findSession(rt, req);
  if (!s) return toSignIn(req);
  const url = new URL(req.url);
  const q = (url.searchParams.get("q") ?? "").trim();
  const caller = sessionCaller(s);
  const found = await findAll(rt, caller, q, url.origin);
  const body = !q
    ? html`<p>Type words in the search box above: it looks through your notes, documents and everything else you keep here.</p>`
    : found.length === 0
      ? html`<p>Nothing matches “${q}”.</p>`
      : html`${found.map(
          (f) => html`<section class="found" aria-labelledby="found-${f.service}"><h2 id="found-${f.service}">${f.title}</h2>
${f.error ? message("alert", `Not searched: ${f.error}`) : html`<ul>${f.items.map((i) => html`<li><a href="${i.href}">${i.title}</a>${i.detail ? html`<span class="hint">${i.detail}</span>` : ""}</li>`)}</ul>`}</section>`,
        )}`;
  return page({
    title: q ? `Search: ${q}` : "Search",
    account: s.account,
    csrf: s.csrf,
    csp: APP_CSP,
    wide: true,
    nav: appNav(rt, caller, "/my/search", q),
    head: html`<style>.found ul{list-style:none;padding:0;margin:0}.found li{display:flex;flex-direction:column;padding:.5rem 0;border-bottom:1px solid var(--line)}.found li a{font-weight:600}</style>`,
    body,
  });
}
