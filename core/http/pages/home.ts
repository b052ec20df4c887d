// {base}/: for a visitor, what this instance is and what anyone may use; for
// a signed-in person, a home screen of cards from the services that have
// something to show now (each plugin's `card`), and the place and choices
// those cards use.
import { findSession, requireCsrf, sessionCaller, type Session } from "../../auth/sessions.ts";
import { dispatch } from "../../dispatch.ts";
import { asHearthError, invalid } from "../../errors.ts";
import { accountMetering, metersAccount, whoPays } from "../../pay/accounts.ts";
import { balanceOf } from "../../pay/ledger.ts";
import type { Runtime } from "../../runtime.ts";
import { cardSources, choicesOf, gatherCards, serviceLink, type Card, type Skipped } from "./home/cards.ts";
import { keepPrefs, prefsOf, type Prefs } from "./home/prefs.ts";
import { readPosted, type Posted } from "./form.ts";
import { setupDone } from "../../settings/setup.ts";
import { html, message, page, seeOther, type Html } from "./layout.ts";
import { madeByAnotherSite } from "../cors.ts";
import { appNav } from "../../views/nav.ts";
import { homeBundle } from "../../views/bundle.ts";
import { APP_CSP } from "../../views/shell.ts";

const STYLE = html`<style>
main,header{max-width:64rem}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(17rem,1fr));align-items:start;gap:1rem;padding:0;margin:1rem 0;list-style:none}
.card{border:1px solid var(--line);border-radius:.6rem;padding:.8rem 1rem;background:var(--field)}
.card h2{margin:0 0 .4rem;font-size:1.1rem}
.card h2 a{text-decoration:none}
.card h2 a:hover,.card h2 a:focus-visible{text-decoration:underline}
.card ul{list-style:none;margin:0;padding:0}
.card li{padding:.3rem 0;border-top:1px solid var(--line);display:flex;flex-wrap:wrap;justify-content:space-between;gap:0 .75rem}
.card li:first-child{border-top:0}
.card .when{color:var(--muted);font-size:.93rem}
.card .lead{margin:.2rem 0 .5rem}
.intro{font-size:1.1rem}
.actions{display:flex;flex-wrap:wrap;gap:.75rem;margin:1rem 0}
.actions a{display:inline-block;padding:.6rem 1.1rem;border-radius:.4rem;border:1px solid var(--accent);font-weight:600;text-decoration:none;min-height:2.75rem}
.actions a.primary{background:var(--accent);color:var(--bg)}
dl.svc{display:grid;grid-template-columns:minmax(6rem,max-content) 1fr;gap:.4rem 1rem}
dl.svc dt{font-weight:600}dl.svc dd{margin:0}
@media (max-width:36rem){dl.svc{grid-template-columns:1fr}dl.svc dd{margin:0 0 .6rem}}
.links{display:flex;flex-wrap:wrap;gap:.5rem 1rem;padding:0;list-style:none}
</style>`;

/** Services that anyone may use without an account, with what they do. */
function publicServices(rt: Runtime): { name: string; description: string }[] {
  return rt.registry
    .services()
    .filter((n) => rt.registry.plugins.get(n)!.methods.some((m) => m.def.access === "public"))
    .map((n) => ({ name: n, description: rt.registry.plugins.get(n)!.def.description }));
}

function signedOut(rt: Runtime): Response {
  const open = publicServices(rt);
  const body = html`<p class="intro">Hearth is a home server: notes, calendar, tasks, files, mail and more for the people who have an account here, and public information —
weather, markets, places, routes, hazards — for anyone. Everything it does is a method you can call over HTTP, from an AI assistant over MCP, or from the command line.</p>
<div class="actions"><a class="primary" href="/signin">Sign in</a><a href="/signup">Sign up</a></div>
<h2>Open to everyone</h2>
<p>These services answer without an account. ${whoPays(rt.config).text}</p>
<dl class="svc">${open.map((s) => html`<dt><a href="${serviceLink(rt, s.name)}">${s.name}</a></dt><dd>${s.description}</dd>`)}</dl>
<h2>For programs</h2>
<ul class="links"><li><a href="/services">Every service and method</a></li><li><a href="/reference">API reference</a></li><li><a href="/openapi.json">OpenAPI document</a></li><li><a href="/status">Status</a></li></ul>`;
  return page({ title: `Welcome to ${rt.config.HEARTH_NAME || "Hearth"}`, body, head: STYLE });
}

function cardHtml(c: Card): Html {
  const id = `card-${c.service}`;
  return html`<li class="card" aria-labelledby="${id}"><section>
<h2 id="${id}"><a href="${c.href}">${c.title}</a></h2>
${c.lead ? html`<p class="lead">${c.lead}</p>` : ""}
${c.lines.length ? html`<ul>${c.lines.map((l) => html`<li><span>${l.href ? html`<a href="${l.href}" rel="noopener noreferrer">${l.text}</a>` : l.text}</span>${l.detail ? html`<span class="when">${l.detail}</span>` : ""}</li>`)}</ul>` : ""}
</section></li>`;
}

function placeForm(rt: Runtime, s: Session, p: Prefs, error?: string, typed?: string): Html {
  // The cards a person chooses for: one they turn on, one whose argument they pick.
  const chosen = cardSources(rt).filter((c) => c.card.optIn || choicesOf(rt, c));
  // The cards that ask for nothing until a place is set, among those this person sees.
  const needsPlace = (c: ReturnType<typeof cardSources>[number]) => {
    try {
      return !!c.card.args && c.card.args({ place: null, zone: null }) === null;
    } catch {
      return false;
    }
  };
  const named = cardSources(rt)
    .filter((c) => (!c.card.optIn || p.cards[c.service]?.on) && needsPlace(c))
    .map((c) => c.card.title.toLowerCase());
  return html`<section aria-labelledby="place-title"><h2 id="place-title">Your place</h2>
${message("alert", error)}
<p class="hint">${p.place ? html`Cards that need a place use <strong>${p.place}</strong>.` : html`Name a town or give a latitude and longitude for the cards that need a place${named.length ? ` (${named.join(", ")})` : ""}.`}</p>
<form method="post" action="/home/place">
<input type="hidden" name="csrf" value="${s.csrf}">
<label for="place">Town, address or “latitude, longitude”</label>
<input type="text" id="place" name="place" value="${typed ?? p.place ?? ""}" autocomplete="address-level2" spellcheck="false">
${chosen.map((c) => {
  const mine = p.cards[c.service] ?? {};
  const offered = choicesOf(rt, c);
  const ch = c.card.choice;
  const field = ch ? `${c.service}_${ch.arg}` : "";
  return html`${c.card.optIn ? html`<label class="choice"><input type="checkbox" name="${c.service}" value="1" ${mine.on ? html`checked` : ""}> ${c.card.optIn}</label>` : ""}
${
  ch && offered
    ? html`<label for="${field}">${ch.label}</label>
${ch.hint ? html`<p class="hint" id="${field}-hint">${ch.hint} Each is described under <a href="/services#${c.service}_${c.card.method}">${c.service}/${c.card.method}</a>.</p>` : ""}
<select id="${field}" name="${field}"${ch.hint ? html` aria-describedby="${field}-hint"` : ""}><option value="">The usual (${offered.usual})</option>
${offered.names.map((n) => html`<option${mine.choice === n ? html` selected` : ""}>${n}</option>`)}</select>`
    : ""
}`;
})}
<p><button type="submit">Save</button></p>
</form></section>`;
}

/** What priced methods cost this person here. */
async function paysNote(rt: Runtime, s: Session): Promise<string> {
  if (rt.config.HEARTH_METERING === "off") return "Every method is free here.";
  if (!(await metersAccount(rt.store.rdb, accountMetering(rt.config), s.account))) return "Priced methods are free for your account.";
  return `Priced methods cost your account credits (a credit is $0.01); the balance is ${await balanceOf(rt.store.rdb, s.account.id)}.`;
}

async function signedIn(rt: Runtime, req: Request, s: Session, refused?: { message: string; status: number; typed?: string }): Promise<Response> {
  const prefs = await prefsOf(rt, s.account.id);
  // A link on another site can open this page in a signed-in browser: its cards may read, but not spend.
  const caller = sessionCaller(s);
  if (madeByAnotherSite(req)) caller.ambient = true;
  const { cards, skipped } = await gatherCards(rt, caller, prefs, new URL(req.url).origin);
  const q = new URL(req.url).searchParams;
  const setup = q.has("setup")
    ? message("notice", "Set up: your choices are saved. Everything else is on the settings page.")
    : s.account.admin && !setupDone(rt)
      ? html`<p class="notice" role="status">This instance still runs on its defaults: <a href="/setup">choose its name, address, time zone and who may sign up</a>.</p>`
      : "";
  const body = html`${message("notice", q.has("saved") ? "Saved." : null)}${setup}
${cards.length ? html`<ul class="cards">${cards.map(cardHtml)}</ul>` : html`<p>Nothing to show yet: add an event, a task or your place, and it appears here.</p>`}
${skipped.length ? html`<p class="hint">Not shown now: ${skipped.map((k: Skipped, i) => html`${i ? "; " : ""}${k.title.toLowerCase()} (${k.reason})`)}.</p>` : ""}
${placeForm(rt, s, prefs, refused?.message, refused?.typed)}
<h2>Everything here</h2>
<p class="hint">${await paysNote(rt, s)}</p>
<ul class="links"><li><a href="/services">Services and methods</a></li><li><a href="/token">Tokens</a></li><li><a href="/reference">API reference</a></li><li><a href="/status">Status</a></li></ul>`;
  // The app's script (core/ui bootPage): the page is kept by the app's worker and says when it is offline, as a screen does.
  const script = await homeBundle();
  const head = html`${STYLE}<link rel="manifest" href="/my/manifest.webmanifest"><meta name="theme-color" content="#8a3b12"><script type="module" src="${script.path}"></script>`;
  return page({ title: `Hello, ${s.account.username}`, body, account: s.account, csrf: s.csrf, head, csp: APP_CSP, status: refused?.status ?? 200, nav: appNav(rt, caller, "/"), path: "/" });
}

export async function homePage(rt: Runtime, req: Request): Promise<Response> {
  const s = await findSession(rt, req);
  return s ? signedIn(rt, req, s) : signedOut(rt);
}

const COORDS = /^\s*(-?\d{1,2}(?:\.\d+)?)\s*[, ]\s*(-?\d{1,3}(?:\.\d+)?)\s*$/;

/** A place as typed: coordinates as they are, anything else through the geocoder as this person. */
async function resolvePlace(rt: Runtime, s: Session, typed: string, baseUrl: string): Promise<Pick<Prefs, "place" | "lat" | "lon">> {
  const text = typed.trim();
  if (!text) return { place: null, lat: null, lon: null };
  if (text.length > 200) throw invalid("place", "place must be at most 200 characters");
  const m = COORDS.exec(text);
  if (m) {
    const lat = Number(m[1]);
    const lon = Number(m[2]);
    if (Math.abs(lat) > 90 || Math.abs(lon) > 180) throw invalid("place", "latitude is -90 to 90 and longitude -180 to 180");
    return { place: `${lat}, ${lon}`, lat, lon };
  }
  const finder = [...rt.registry.plugins.values()].find((p) => p.def.geocoder && rt.registry.get(p.def.name, p.def.geocoder.method));
  if (!finder) throw invalid("place", "this instance has no geocoder: give a latitude and longitude");
  const g = finder.def.geocoder!;
  const found = g.read(await dispatch(rt, { service: finder.def.name, method: g.method, args: { [g.arg]: text }, caller: sessionCaller(s), requestId: crypto.randomUUID(), baseUrl, surface: "page" }));
  if (!found) throw invalid("place", `no place called "${text}" was found; try a town with its country, or a latitude and longitude`);

  return { place: found.name || text, lat: found.lat, lon: found.lon };
}

export async function homePlacePost(rt: Runtime, req: Request): Promise<Response> {
  const s = await findSession(rt, req);
  if (!s) return seeOther("/signin?next=/");
  let posted: Posted | null = null;
  try {
    posted = await readPosted(rt, req);
    requireCsrf(s, posted.get("csrf"));
    const place = await resolvePlace(rt, s, posted.get("place") ?? "", new URL(req.url).origin);
    const before = await prefsOf(rt, s.account.id);
    const cards = { ...before.cards };
    for (const c of cardSources(rt)) {
      const offered = choicesOf(rt, c);
      if (!c.card.optIn && !offered) continue;
      const field = c.card.choice ? `${c.service}_${c.card.choice.arg}` : "";
      const choice = (offered && posted.get(field)) || null;
      if (choice !== null && !offered!.names.includes(choice)) throw invalid(field, `${field} must be one of ${offered!.names.join(", ")} (got ${JSON.stringify(choice.slice(0, 40))})`);
      cards[c.service] = { on: c.card.optIn ? posted.get(c.service) === "1" : undefined, choice };
    }
    await keepPrefs(rt, s.account.id, { ...before, ...place, cards });
    return seeOther("/?saved=1");
  } catch (e) {
    const err = asHearthError(e);
    if (err.status === 403 || err.status === 413) return page({ title: "Home", status: err.status, account: s.account, csrf: s.csrf, body: html`${message("alert", err.message)}<p><a href="/">Back</a></p>` });
    return signedIn(rt, req, s, { message: err.message, status: err.status, typed: posted?.get("place") });
  }
}
