// CalDAV (RFC 4791) and CardDAV (RFC 6352) over WebDAV (RFC 4918), with
// sync-collection (RFC 6578) and the well-known addresses (RFC 6764), for
// every service that declares a `dav` collection. The protocol lives here;
// what a record looks like as iCalendar or vCard lives with its service.
//
//   /dav/principals/<user>/                 the account
//   /dav/calendars/<user>/<service>/<name>  calendar collections and objects
//   /dav/addressbooks/<user>/<service>/<name>
//
// Every request runs in one write transaction: reconciling with the
// service's records may record changes, and a client's change either
// completes through dispatch or leaves nothing behind.
//
// Written here rather than taken from a library: caldav-adapter is Koa
// middleware for CalDAV alone (no CardDAV) over its own storage callbacks,
// webdav-server and nephele are WebDAV file servers for Node's http and
// Express without CalDAV, CardDAV or sync-collection. None works on
// web-standard Request/Response under Elysia, and each would own storage
// that here must go through dispatch.
import { assertScope } from "../auth/tokens.ts";
import { limitCall, limitDavWrite } from "../auth/limits.ts";
import { newCall, type Call } from "../call.ts";
import { asHearthError, HearthError } from "../errors.ts";
import { acceptsBodies, readText } from "../http/body.ts";
import { clientAddress, route, type App, type RouteArgs } from "../http/app.ts";
import { identify } from "../http/identify.ts";
import type { AppPasswordPresets } from "../http/pages/token.ts";
import { errorResponse } from "../http/respond.ts";
import type { Caller, Ctx, Db } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { DavPrecondition, invalidData, tooLargeFor, type DavCollection, type DavRecord } from "./collection.ts";
import { etagOf, itemNamed, rawStands, reconcile, reconcileOne, removed, sharers, written, type Item, type Synced } from "./state.ts";
import { child, children, descendants, errorXml, esc, multistatus, NS, parseXml, prop, type El, type ResponseXml } from "./xml.ts";
import { davMigrations } from "./migrations.ts";
import { calendarMatches, cardMatches, expanded, expandOf, type Range } from "./query.ts";
import type { Floating } from "../scheduler/rule.ts";
import { validZone } from "../scheduler/zone.ts";
import { defineModule } from "../module.ts";

const BODY_LIMIT = 16 * 1024 * 1024;
const NAME_MAX = 255;
const HOMES = { calendar: "calendars", addressbook: "addressbooks" } as const;
const ALLOW = "OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, REPORT";

type Kind = "root" | "principal" | "home" | "collection" | "object";
interface Target {
  kind: Kind;
  type?: "calendar" | "addressbook";
  service?: string;
  col?: DavCollection;
  name?: string;
}

interface Req {
  rt: Runtime;
  caller: Caller & { account: NonNullable<Caller["account"]> };
  call: Call;
  origin: string;
  db: Db;
  synced: Map<string, Synced>;
  /** Single resources this request read without listing their collection, by service and name. */
  objects: Map<string, { item: Item; record: DavRecord }>;
  /** calendar-data's expand in a REPORT: repeats written out as their occurrences in this range. */
  expand?: Range | null;
}

/** Where floating and all-day times are read in queries: the instance's zone (HEARTH_TZ, else TZ), where the scheduler fires them; else UTC. */
const floatingOf = (r: Req): Floating => ({ tz: validZone(r.rt.config.HEARTH_TZ) ?? validZone(r.rt.config.TZ), offset: 0 });

const principalHref = (user: string) => `/dav/principals/${encodeURIComponent(user)}/`;
const homeHref = (type: "calendar" | "addressbook", user: string) => `/dav/${HOMES[type]}/${encodeURIComponent(user)}/`;
const colHref = (type: "calendar" | "addressbook", user: string, service: string) => `${homeHref(type, user)}${service}/`;
const ext = (col: DavCollection) => (col.type === "calendar" ? ".ics" : ".vcf");
const contentType = (col: DavCollection) => (col.type === "calendar" ? "text/calendar; charset=utf-8" : "text/vcard; charset=utf-8");

function collections(rt: Runtime, type?: "calendar" | "addressbook"): [string, DavCollection][] {
  const out: [string, DavCollection][] = [];
  for (const p of rt.registry.plugins.values()) {
    const dav = (p.def as { dav?: DavCollection }).dav;
    if (dav && (!type || dav.type === type)) out.push([p.def.name, dav]);
  }
  return out;
}

const inScope = (caller: Caller, service: string) => caller.scopes === "*" || caller.scopes.includes(service);

function resolve(rt: Runtime, path: string, user: string): Target {
  let segs: string[];
  try {
    segs = path
      .replace(/^\/dav\/?/, "")
      .split("/")
      .filter(Boolean)
      .map((s) => decodeURIComponent(s));
  } catch {
    throw new HearthError("invalid_argument", "the path is not valid percent-encoding", { field: "path" });
  }
  if (segs.length === 0) return { kind: "root" };
  const [top, owner, service, name, ...rest] = segs;
  if (owner !== undefined && owner !== user) throw new HearthError("forbidden", `this address belongs to another account than "${user}"`);
  if (top === "principals" && segs.length === 2) return { kind: "principal" };
  const type = top === "calendars" ? "calendar" : top === "addressbooks" ? "addressbook" : null;
  if (!type || owner === undefined || rest.length) throw new HearthError("not_found", `nothing at ${path}`);
  if (service === undefined) return { kind: "home", type };
  const col = collections(rt, type).find(([s]) => s === service)?.[1];
  if (!col) throw new HearthError("not_found", `no ${type} named "${service}"`);
  if (name !== undefined && (name.length > NAME_MAX || /[\u0000-\u001f]/.test(name)))
    throw new HearthError("invalid_argument", `a resource name is at most ${NAME_MAX} characters, with no control characters`, { field: "path" });
  return { kind: name === undefined ? "collection" : "object", type, service, col, name };
}

function ctxFor(r: Req, service: string): Ctx {
  return r.rt.makeCtx(service, "write", r.call, "dav", r.origin);
}

/**
 * A request takes one turn of the reads limit for each service whose
 * collection it may read, as the service's reads do, before it starts (the
 * limit may be kept in another server, so it is awaited, outside the lock).
 */
async function limitSyncs(rt: Runtime, caller: Caller, t: Target) {
  const services = t.service ? [t.service] : t.kind === "home" ? collections(rt, t.type).map(([s]) => s).filter((s) => inScope(caller, s)) : [];
  for (const service of services) {
    const read = rt.registry.plugins.get(service)!.methods.find((m) => m.def.kind === "read");
    if (read) await limitCall(rt, read, caller);
  }
}

/** The collection as the service has it now. */
async function sync(r: Req, service: string, col: DavCollection): Promise<Synced> {
  let s = r.synced.get(service);
  if (s) return s;
  assertScope(r.caller, service);
  // Held until the request's write ends: what a request read of the collection (its revision, the
  // ETags an If-Match is checked against) stays so until it has written what follows from it, also
  // on PostgreSQL, where requests of one person's calendar run side by side.
  await r.rt.store.lock(`dav:${r.caller.account.id}:${service}`);
  s = await reconcile(r.db, r.caller.account.id, service, ext(col), await col.list(ctxFor(r, service)));
  r.synced.set(service, s);
  return s;
}

/** The collection as sync() left it for this request: what properties and bodies are read from. */
function synced(r: Req, service: string): Synced {
  const s = r.synced.get(service);
  if (!s) throw new Error(`the ${service} collection was read before it was synced`);
  return s;
}

/** The properties that are the collection's state, and so need it synced first. */
const STATEFUL = new Set(["getctag", "sync-token", "getetag", "calendar-data", "address-data"]);

/** Syncs the collections whose state the wanted properties of these targets show. */
async function syncFor(r: Req, targets: Target[], wanted: { ns: string; name: string }[]) {
  if (!wanted.some((w) => STATEFUL.has(w.name))) return;
  for (const t of targets) if (t.kind === "collection" || t.kind === "object") await sync(r, t.service!, t.col!);
}

const syncToken = (revision: number) => `urn:hearth:sync:${revision}`;

// ---- properties ----

type Getter = (r: Req, t: Target) => string | undefined;
const key = (ns: string, name: string) => `${ns}|${name}`;
const hrefs = (...h: string[]) => h.map((x) => `<d:href>${esc(x)}</d:href>`).join("");
const privileges = ["read", "write", "write-content", "write-properties", "bind", "unbind", "read-current-user-privilege-set"]
  .map((p) => `<d:privilege><d:${p}/></d:privilege>`)
  .join("");

const objectKey = (service: string, name: string) => `${service}/${name}`;

/** The live item and its record at an object target: read alone (itemAt), else from the synced collection. */
function objectOf(r: Req, t: Target): { item: Item; record: DavRecord } | undefined {
  const one = r.objects.get(objectKey(t.service!, t.name!));
  if (one) return one;
  const s = r.synced.get(t.service!);
  if (!s) throw new Error(`${t.service}/${t.name} was read before it was looked up`);
  const item = s.byName.get(t.name!);
  return item && { item, record: s.records.get(item.ref!)! };
}

function objectBody(r: Req, t: Target): { item: Item; body: string } | undefined {
  const o = objectOf(r, t);
  if (!o) return undefined;
  const { item, record } = o;
  if (rawStands(item)) return { item, body: item.raw! };
  const version = item.raw ? /^VERSION:(\S+)/im.exec(item.raw)?.[1] : undefined;
  const uid = item.uid ?? item.ref!;
  if (item.raw)
    try {
      return { item, body: t.col!.render(record, { uid, version, raw: item.raw }) };
    } catch (e) {
      // A text the service once took and now cannot read (its rules changed since): the record as the service has it, rather than nothing.
      r.rt.log.warn("dav: a client's text could not be brought up to its record", { service: t.service, name: item.name, error: String(e) });
    }
  return { item, body: t.col!.render(record, { uid, version }) };
}

/**
 * An object's text inside a report: a carriage return is written as a
 * character reference, since an XML parser turns a literal CR LF into LF
 * (XML 1.0 section 2.11), and the client is to get the lines it sent.
 */
const objectXml = (body: string) => esc(body).replace(/\r/g, "&#13;");

const PROPS: Record<string, Getter> = {
  [key(NS.dav, "resourcetype")]: (_r, t) =>
    t.kind === "principal"
      ? "<d:principal/>"
      : t.kind === "collection"
        ? t.type === "calendar"
          ? "<d:collection/><c:calendar/>"
          : "<d:collection/><card:addressbook/>"
        : t.kind === "object"
          ? ""
          : "<d:collection/>",
  [key(NS.dav, "displayname")]: (r, t) =>
    t.kind === "collection" ? esc(t.col!.displayName) : t.kind === "principal" ? esc(r.caller.account.username) : t.kind === "home" ? (t.type === "calendar" ? "Calendars" : "Address books") : undefined,
  [key(NS.dav, "current-user-principal")]: (r) => hrefs(principalHref(r.caller.account.username)),
  [key(NS.dav, "principal-URL")]: (r) => hrefs(principalHref(r.caller.account.username)),
  [key(NS.dav, "owner")]: (r) => hrefs(principalHref(r.caller.account.username)),
  [key(NS.dav, "principal-collection-set")]: () => hrefs("/dav/principals/"),
  [key(NS.caldav, "calendar-home-set")]: (r, t) => (t.kind === "principal" || t.kind === "root" ? hrefs(homeHref("calendar", r.caller.account.username)) : undefined),
  [key(NS.carddav, "addressbook-home-set")]: (r, t) => (t.kind === "principal" || t.kind === "root" ? hrefs(homeHref("addressbook", r.caller.account.username)) : undefined),
  [key(NS.dav, "current-user-privilege-set")]: () => privileges,
  [key(NS.dav, "supported-report-set")]: (_r, t) => {
    if (t.kind !== "collection") return undefined;
    const ns = t.type === "calendar" ? "c" : "card";
    const names = t.type === "calendar" ? ["calendar-query", "calendar-multiget"] : ["addressbook-query", "addressbook-multiget"];
    return [...names.map((n) => `<${ns}:${n}/>`), "<d:sync-collection/>"].map((x) => `<d:supported-report><d:report>${x}</d:report></d:supported-report>`).join("");
  },
  [key(NS.cs, "getctag")]: (r, t) => (t.kind === "collection" ? esc(String(synced(r, t.service!).revision)) : undefined),
  [key(NS.dav, "sync-token")]: (r, t) => (t.kind === "collection" ? esc(syncToken(synced(r, t.service!).revision)) : undefined),
  [key(NS.caldav, "supported-calendar-component-set")]: (_r, t) => (t.kind === "collection" && t.type === "calendar" ? `<c:comp name="${t.col!.component}"/>` : undefined),
  [key(NS.caldav, "supported-calendar-data")]: (_r, t) =>
    t.kind === "collection" && t.type === "calendar" ? '<c:calendar-data content-type="text/calendar" version="2.0"/>' : undefined,
  [key(NS.carddav, "supported-address-data")]: (_r, t) =>
    t.kind === "collection" && t.type === "addressbook"
      ? '<card:address-data-type content-type="text/vcard" version="3.0"/><card:address-data-type content-type="text/vcard" version="4.0"/>'
      : undefined,
  [key(NS.dav, "getcontenttype")]: (_r, t) => (t.kind === "object" ? contentType(t.col!) : undefined),
  [key(NS.dav, "getetag")]: (r, t) => {
    const item = t.kind === "object" ? objectOf(r, t)?.item : undefined;
    return item ? esc(etagOf(item)) : undefined;
  },
  [key(NS.caldav, "calendar-data")]: (r, t) => {
    if (t.kind !== "object" || t.type !== "calendar") return undefined;
    const body = objectBody(r, t)?.body ?? "";
    return objectXml(r.expand && body ? expanded(body, r.expand, floatingOf(r)) : body);
  },
  [key(NS.carddav, "address-data")]: (r, t) => (t.kind === "object" && t.type === "addressbook" ? objectXml(objectBody(r, t)?.body ?? "") : undefined),
};

const ALLPROP = ["resourcetype", "displayname", "getetag", "getcontenttype", "sync-token"].map((name) => ({ ns: NS.dav as string, name }));

function requested(el: El | null | undefined): { ns: string; name: string }[] {
  const p = child(el, NS.dav, "prop");
  if (!p) return ALLPROP;
  return p.children.map((c) => ({ ns: c.ns, name: c.name }));
}

function propsOf(r: Req, t: Target, href: string, wanted: { ns: string; name: string }[]): ResponseXml {
  const found: string[] = [];
  const missing: { ns: string; name: string }[] = [];
  for (const w of wanted) {
    const v = PROPS[key(w.ns, w.name)]?.(r, t);
    if (v === undefined) missing.push(w);
    else found.push(prop(w.ns, w.name, v));
  }
  return { href, found, missing };
}

// ---- methods ----

const xml = (status: number, body: string, headers: Record<string, string> = {}) =>
  new Response(body, { status, headers: { "content-type": "application/xml; charset=utf-8", ...headers } });

function members(r: Req, t: Target, user: string): { href: string; t: Target }[] {
  if (t.kind === "root") return [{ href: principalHref(user), t: { kind: "principal" } }];
  if (t.kind === "home")
    return collections(r.rt, t.type)
      .filter(([s]) => inScope(r.caller, s))
      .map(([service, col]) => ({ href: colHref(t.type!, user, service), t: { kind: "collection", type: t.type, service, col } }));
  if (t.kind === "collection")
    return synced(r, t.service!)
      .items.filter((i) => i.ref !== null)
      .map((i) => ({ href: colHref(t.type!, user, t.service!) + encodeURIComponent(i.name), t: { ...t, kind: "object", name: i.name } }));
  return [];
}

async function propfind(r: Req, t: Target, href: string, body: El | null, depth: string): Promise<Response> {
  if (t.kind === "collection") await sync(r, t.service!, t.col!);
  if (t.kind === "object" && !(await itemAt(r, t))) throw new HearthError("not_found", `no ${t.name} in ${t.service}`);
  const wanted = body && child(body, NS.dav, "propname") ? [] : requested(body);
  const out = [propsOf(r, t, href, wanted)];
  if (depth !== "0") {
    const those = members(r, t, r.caller.account.username);
    await syncFor(r, those.map((m) => m.t), wanted);
    for (const m of those) out.push(propsOf(r, m.t, m.href, wanted));
  }
  return xml(207, multistatus(out));
}

function objectTarget(t: Target, name: string): Target {
  return { ...t, kind: "object", name };
}

async function report(r: Req, t: Target, href: string, body: El | null): Promise<Response> {
  if (!body) throw new HearthError("invalid_argument", "a REPORT needs an XML body", { field: "body" });
  if (t.kind !== "collection") throw new DavPrecondition(403, { ns: NS.dav, name: "supported-report" }, "reports are made on a calendar or address book");
  const s = await sync(r, t.service!, t.col!);
  const wanted = requested(body);
  const live = s.items.filter((i) => i.ref !== null);
  const one = (i: Item) => propsOf(r, objectTarget(t, i.name), href + encodeURIComponent(i.name), wanted);
  if (body.name === "calendar-query" || body.name === "addressbook-query") {
    const filter = child(body, body.ns, "filter");
    if (t.type === "calendar") r.expand = expandOf(body);
    const matches = (text: string) => {
      if (!filter) return true;
      try {
        return t.type === "calendar" ? calendarMatches(filter, text, floatingOf(r)) : cardMatches(filter, text);
      } catch (e) {
        // A filter the server cannot apply is refused; an object ical.js cannot read matches nothing.
        if (e instanceof HearthError) throw e;
        return false;
      }
    };
    const hits = live.filter((i) => {
      const o = objectBody(r, objectTarget(t, i.name));
      return !!o && matches(o.body);
    });
    // An address book query may ask for at most so many cards (RFC 6352 8.6.1): the rest is said to be left out with a 507.
    const n = Number(child(child(body, NS.carddav, "limit"), NS.carddav, "nresults")?.text.trim());
    if (t.type === "addressbook" && Number.isInteger(n) && n >= 0 && hits.length > n)
      return xml(207, multistatus([...hits.slice(0, n).map(one), { href, status: 507 }]));
    return xml(207, multistatus(hits.map(one)));
  }
  if (body.name === "calendar-multiget" || body.name === "addressbook-multiget") {
    const out = children(body, NS.dav, "href").map((h) => {
      const path = new URL(h.text.trim(), r.origin).pathname;
      const name = path.startsWith(href) ? decodeURIComponent(path.slice(href.length)) : "";
      const i = s.byName.get(name);
      return i ? one(i) : { href: h.text.trim(), status: 404 };
    });
    return xml(207, multistatus(out));
  }
  if (body.name === "sync-collection" && body.ns === NS.dav) {
    const given = child(body, NS.dav, "sync-token")?.text.trim() ?? "";
    // A token is a revision, and after a limited answer the last name given at that revision: what is after it is what is left.
    let since = 0;
    let after: string | null = null;
    if (given) {
      const m = /^urn:hearth:sync:(\d+)(?::(.+))?$/.exec(given);
      let name: string | null = null;
      try {
        name = m?.[2] === undefined ? null : decodeURIComponent(m[2]);
      } catch {}
      if (!m || Number(m[1]) > s.revision || (m[2] !== undefined && name === null))
        throw new DavPrecondition(403, { ns: NS.dav, name: "valid-sync-token" }, "the sync-token is not one this collection gave");
      since = Number(m[1]);
      after = name;
    }
    const first = since === 0 && after === null;
    const changed = s.items
      .filter((i) => (i.revision > since || (after !== null && i.revision === since && i.name > after)) && (i.ref !== null || !first))
      .sort((a, b) => a.revision - b.revision || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const asText = child(child(body, NS.dav, "limit"), NS.dav, "nresults")?.text.trim();
    const limit = asText === undefined ? Infinity : Number(asText);
    if (asText !== undefined && !(Number.isInteger(limit) && limit >= 0))
      throw new DavPrecondition(403, { ns: NS.dav, name: "number-of-matches-within-limits" }, "DAV:nresults is a whole number");
    const sent = changed.slice(0, limit);
    const out: ResponseXml[] = sent.map((i) => (i.ref !== null ? one(i) : { href: href + encodeURIComponent(i.name), status: 404 }));
    if (sent.length === changed.length) return xml(207, multistatus(out, syncToken(s.revision)));
    // The rest is left for the next request, from a token naming where this answer stopped (RFC 6578 3.6).
    const last = sent.at(-1);
    out.push({ href, status: 507 });
    return xml(207, multistatus(out, last ? `${syncToken(last.revision)}:${encodeURIComponent(last.name)}` : given || syncToken(0)));
  }
  throw new DavPrecondition(403, { ns: NS.dav, name: "supported-report" }, `the ${body.name} report is not supported here`);
}

function etagMatches(header: string, etag: string | null): boolean {
  if (header.trim() === "*") return etag !== null;
  if (etag === null) return false;
  return header.split(",").some((h) => h.trim().replace(/^W\//, "") === etag);
}

async function recordOf(r: Req, t: Target, id: string): Promise<DavRecord | undefined> {
  const ctx = ctxFor(r, t.service!);
  return t.col!.get ? t.col!.get(id, ctx) : (await t.col!.list(ctx)).find((x) => x.id === id);
}

/**
 * The live item at an object target and its record, brought up to the
 * service's record alone: by the item's name and the record's id, each
 * through an index, so its cost does not grow with the collection.
 */
async function itemAt(r: Req, t: Target): Promise<Item | null> {
  assertScope(r.caller, t.service!);
  // The lock sync() takes (taken again by one transaction, it is already held).
  await r.rt.store.lock(`dav:${r.caller.account.id}:${t.service}`);
  const account = r.caller.account.id;
  const found = await itemNamed(r.db, account, t.service!, t.name!);
  if (!found || found.ref === null) return null;
  const record = await recordOf(r, t, found.ref);
  const item = await reconcileOne(r.db, account, t.service!, found, record);
  if (item.ref === null || !record) return null;
  r.objects.set(objectKey(t.service!, t.name!), { item, record });
  return item;
}

function checkPreconditions(req: Request, item: Item | null) {
  const etag = item ? etagOf(item) : null;
  const ifMatch = req.headers.get("if-match");
  const ifNone = req.headers.get("if-none-match");
  if (ifMatch !== null && !etagMatches(ifMatch, etag)) throw new DavPrecondition(412, { ns: NS.dav, name: "lock-token-matches-request-uri" }, "If-Match does not match the current ETag: the resource changed (or is gone) since it was read");
  if (ifNone !== null && etagMatches(ifNone, etag)) throw new DavPrecondition(412, { ns: NS.dav, name: "lock-token-matches-request-uri" }, "If-None-Match: the resource already exists");
}

async function put(r: Req, t: Target, req: Request, text: string): Promise<Response> {
  if (t.kind !== "object") throw new HearthError("method_not_allowed", "PUT a calendar object or vCard into a collection", { headers: { Allow: ALLOW } });
  if (!text.trim()) throw new HearthError("invalid_argument", "the body is empty", { field: "body" });
  const item = await itemAt(r, t);
  checkPreconditions(req, item);
  const account = r.caller.account.id;
  let made: Awaited<ReturnType<DavCollection["put"]>>;
  try {
    made = await t.col!.put(text, item?.ref ?? null, ctxFor(r, t.service!), item ? objectOf(r, t)?.record : undefined);
  } catch (e) {
    // A refusal naming the record it conflicts with is answered with that record's address: the collection is synced to know it.
    if (e instanceof DavPrecondition && e.conflictRef) await sync(r, t.service!, t.col!);
    // What the service refused in the text is said as the precondition a calendar or contacts app shows.
    if (!(e instanceof DavPrecondition) && e instanceof HearthError && e.kind === "invalid_argument") throw invalidData(e, t.type!);
    throw e;
  }
  // A UID names one object in a collection (RFC 4791 5.3.2.1, RFC 6352 6.3.2.1): another resource
  // holding it is refused, naming that resource, and what the service did for this text is undone
  // with the request's write.
  const { holder, others } = await sharers(r.db, account, t.service!, made.uid, made.id, t.name!);
  if (holder) {
    await sync(r, t.service!, t.col!);
    throw new DavPrecondition(
      409,
      { ns: t.type === "calendar" ? NS.caldav : NS.carddav, name: "no-uid-conflict" },
      `another resource in this collection (${holder.name}) has the UID ${JSON.stringify(made.uid)}: change that one, or give this one a UID of its own`,
      holder.ref!,
      "uid",
    );
  }
  // The record as the service's put left it, when it says; else read back.
  const record = made.record ?? (await recordOf(r, t, made.id));
  if (!record) throw new Error(`${t.service} did not keep the record its put returned`);
  const now = await written(r.db, account, t.service!, t.name!, record, made.uid, text, others);
  return new Response(null, { status: item ? 204 : 201, headers: { etag: etagOf(now) } });
}

async function remove(r: Req, t: Target, req: Request): Promise<Response> {
  if (t.kind !== "object") throw new HearthError("forbidden", "a collection cannot be deleted; delete its members");
  const item = await itemAt(r, t);
  if (!item) throw new HearthError("not_found", `no ${t.name} in ${t.service}`);
  checkPreconditions(req, item);
  await t.col!.remove(item.ref!, ctxFor(r, t.service!));
  await removed(r.db, r.caller.account.id, t.service!, t.name!);
  return new Response(null, { status: 204 });
}

/** Properties are the service's own: a client may not set them, and is told so per property (RFC 4918 9.2). */
function proppatch(href: string, body: El | null): Response {
  const names = [...descendants(body, NS.dav, "prop").flatMap((p) => p.children)];
  const parts = names.map((n) => prop(n.ns, n.name)).join("");
  return xml(
    207,
    `<?xml version="1.0" encoding="utf-8"?>\n<d:multistatus xmlns:d="DAV:"><d:response><d:href>${esc(href)}</d:href><d:propstat><d:prop>${parts}</d:prop><d:status>HTTP/1.1 403 Forbidden</d:status></d:propstat></d:response></d:multistatus>`,
  );
}

function refusal(rt: Runtime, e: unknown, r: Req | null, t: Target | null, rid: string, path: string): Response {
  if (e instanceof DavPrecondition) {
    let inner = "";
    if (e.conflictRef && r && t?.service) {
      // The collection as this request last saw it (a PUT syncs it before it asks the service).
      const i = r.synced.get(t.service)?.items.find((x) => x.ref === e.conflictRef);
      if (i) inner = `<d:href>${esc(colHref(t.type!, r.caller.account.username, t.service) + encodeURIComponent(i.name))}</d:href>`;
    }
    const res = errorXml(e.element.ns, e.element.name, inner).replace("</d:error>", `<d:responsedescription>${esc(e.message)}</d:responsedescription></d:error>`);
    return xml(e.status, res, { ...e.headers, "x-request-id": rid });
  }
  const err = asHearthError(e);
  if (err.status === 500 || err.kind === "storage_unavailable") rt.log.error("dav failed", { rid, path, error: String((e as Error)?.stack ?? e) });
  const headers = err.status === 401 ? { "www-authenticate": 'Basic realm="Hearth", charset="UTF-8"' } : undefined;
  return errorResponse(e, rid, headers);
}

async function handle(rt: Runtime, c: RouteArgs): Promise<Response> {
  const req = c.request;
  const rid = crypto.randomUUID();
  const started = performance.now();
  const url = new URL(req.url);
  let status = 0;
  let callerId: string | null = null;
  try {
    if (req.method === "OPTIONS")
      return new Response(null, { status: 200, headers: { dav: "1, 3, calendar-access, addressbook, extended-mkcol", allow: ALLOW } });
    if (!ALLOW.split(", ").includes(req.method)) throw new HearthError("method_not_allowed", `${req.method} is not supported here`, { headers: { Allow: ALLOW } });
    const caller = await identify(rt, req, clientAddress(c));
    if (!caller.account) throw new HearthError("unauthenticated", "sign in with your username and an app password (a token) as the password");
    callerId = caller.account.id;
    // Who may not reach any collection, or not this one, is refused before a byte of the body is read.
    if (!collections(rt).some(([s]) => inScope(caller, s)))
      throw new HearthError("forbidden", `this token is not allowed ${collections(rt).map(([s]) => s).join(", ")}: make an app password for calendars or contacts`);
    const user = caller.account.username;
    const t = resolve(rt, url.pathname, user);
    const href = t.kind === "object" ? url.pathname : url.pathname.endsWith("/") ? url.pathname : `${url.pathname}/`;
    if (t.service) assertScope(caller, t.service);
    // Capped as it arrives and counted in the instance's budget of bodies in flight.
    const text = await readText(rt, req, BODY_LIMIT).catch((e) => {
      // A calendar object or vCard over the cap is refused as the precondition its client knows.
      throw e instanceof HearthError && e.kind === "too_large" && req.method === "PUT" && t.kind === "object" ? tooLargeFor(e, t.type!) : e;
    });
    // A change takes one turn from the DAV bucket, sized for a first sync, for all it reads and writes; anything else, the reads limit.
    const changes = req.method === "PUT" || req.method === "DELETE";
    const as = changes ? await limitDavWrite(rt, caller) : caller;
    if (!changes) await limitSyncs(rt, caller, t);
    let r: Req | null = null;
    const res = await rt.store
      .write(async () => {
        r = { rt, caller: as as Req["caller"], call: newCall(as, { id: rid, surface: "dav" }), origin: url.origin, db: rt.store.wdb, synced: new Map(), objects: new Map() };
        switch (req.method) {
          case "PROPFIND":
            return await propfind(r, t, href, parseXml(text), req.headers.get("depth") ?? "1");
          case "REPORT":
            return await report(r, t, href, parseXml(text));
          case "GET":
          case "HEAD": {
            if (t.kind !== "object") return new Response(`${t.kind === "collection" ? t.col!.displayName : "Hearth"}: a CalDAV and CardDAV address for calendar and contacts apps.\n`, { headers: { "content-type": "text/plain; charset=utf-8" } });
            const o = (await itemAt(r, t)) && objectBody(r, t);
            if (!o) throw new HearthError("not_found", `no ${t.name} in ${t.service}`);
            return new Response(req.method === "HEAD" ? null : o.body, { headers: { "content-type": contentType(t.col!), etag: etagOf(o.item) } });
          }
          case "PUT":
            return await put(r, t, req, text);
          case "DELETE":
            return await remove(r, t, req);
          case "PROPPATCH":
            return proppatch(href, parseXml(text));
          default:
            throw new HearthError("method_not_allowed", `${req.method} is not supported here`, { headers: { Allow: ALLOW } });
        }
      })
      .catch((e) => refusal(rt, e, r, t, rid, url.pathname));
    status = res.status;
    res.headers.set("x-request-id", rid);
    if (!res.headers.has("dav")) res.headers.set("dav", "1, 3, calendar-access, addressbook");
    return res;
  } catch (e) {
    const res = refusal(rt, e, null, null, rid, url.pathname);
    status = res.status;
    return res;
  } finally {
    rt.log.line({ rid, service: "dav", method: req.method, path: url.pathname, status, ms: Math.round((performance.now() - started) * 100) / 100, caller: callerId });
  }
}

function mountDav(app: App, rt: Runtime) {
  acceptsBodies(rt, BODY_LIMIT);
  // RFC 6764: clients asked for a server's name alone look here first.
  for (const w of ["caldav", "carddav"]) app.all(`/.well-known/${w}`, () => new Response(null, { status: 301, headers: { location: "/dav/" } }), { parse: "none" });
  const h = route((c) => handle(rt, c));
  app.all("/dav", h, { parse: "none" });
  app.all("/dav/*", h, { parse: "none" });
}

// App password presets on /token: one per kind of collection, scoped to the services holding them.
const presets: AppPasswordPresets = (rt) =>
  (["calendar", "addressbook"] as const).flatMap((type) => {
    const cols = collections(rt, type);
    if (!cols.length) return [];
    return [{ label: cols.map(([, c]) => c.displayName).join(" and "), scopes: cols.map(([s]) => s).sort(), path: "/dav/" }];
  });

export const davModule = defineModule({ name: "dav", provides: { mounts: [mountDav], appPasswords: [presets], migrations: { dav: davMigrations } } });
