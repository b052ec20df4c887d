// What a drop-in plugin imports: `import { definePlugin, read, write, T, invalid } from "hearth"`.
// The registry serves this module under the name "hearth" (and TypeBox under its
// own name), so a plugin in any folder loads without a node_modules of its own,
// from source and from the single binary alike. Everything a plugin needs to
// declare methods, tables and providers is here; docs/plugins.md describes it.
export { definePlugin, read, write } from "./plugin.ts";
export { fileName } from "./export/names.ts";
export type {
  Access,
  Account,
  ActivityEvent,
  BaseCtx,
  Blobs,
  Caller,
  Capability,
  CapabilityTypes,
  Clock,
  Ctx,
  Db,
  ExportFile,
  FullTextIndex,
  IndexEntry,
  IndexHit,
  Logger,
  MethodDef,
  PluginDef,
  Price,
  Received,
  RouteDef,
} from "./plugin.ts";
export type { ActivityRow, CapabilityFactory, CapabilityScope } from "./capabilities.ts";
// The capabilities core modules provide (ctx.schedule, ctx.ai, …), by their types: naming these modules
// brings their additions to Ctx into a plugin's type check. Types only: nothing more is loaded.
export type { Schedule, Firing, FiringHandler, FiringRecord } from "./scheduler/index.ts";
export type { BytesFetcher, BytesOptions, BytesAnswer } from "./upstream/bytes.ts";
export type { Ai, ChatRequest, ChatAnswer, ChatMessage } from "./ai/index.ts";
export type { Mail, SendInput, LocalMessage } from "./mail/index.ts";
export type { Broadcast } from "./shared/module.ts";
export type { InstancePayments } from "./pay/local.ts";
export type { Ledger } from "./pay/capability.ts";
export type { Sandbox } from "./http/sandbox.ts";
// MCP Apps views a plugin offers (`provides.views`), and what they are handed.
export type { PluginViews, ViewHost, View, ViewTool } from "./mcp/plugin-views.ts";
// ctx.agentHost, for the agent: its tools, how a run was started, runs started for others.
export type { AgentHost, AskResult, RunHint, Tool as AgentTool, Client as AgentClient } from "./agent/host.ts";
export { Type as T, type Static, type TObject } from "@sinclair/typebox";
// A list that grows with what a person stores, read in pages by key: its optional limit and cursor, and its answer.
export { PAGE_CAP, pageArgs, pageOf, pageAnswer, type Page, type KeyPart } from "./paging.ts";
export { HearthError, invalid, notFound, forbidden, conflict, tooLarge, notConfigured, unauthenticated, upstream } from "./errors.ts";
// For a plugin offering its records to calendar and contacts apps (`dav`).
export { DavPrecondition } from "./dav/collection.ts";
export type { DavCollection, DavRecord } from "./dav/collection.ts";
export { calendarComponent, calendarSeries, vcard, textOf, uidOf, ICAL } from "./dav/ical.ts";
// Outside providers: ctx.http reaches only those a manifest lists in `providers`.
export { defineProvider, perMinute, perSecond, type ProviderDef, type RateCap } from "./upstream/providers.ts";
export type { Upstream, GetOptions, Fetched, About } from "./upstream/index.ts";
export { freeWhenHeld } from "./upstream/index.ts";
// Tables (drizzle over SQLite), declared in a plugin's schema.ts and its manifest's `tables`.
export { sqliteTable, text, integer, real, blob, index, uniqueIndex, primaryKey } from "drizzle-orm/sqlite-core";
export { eq, ne, gt, gte, lt, lte, and, or, not, inArray, notInArray, isNull, isNotNull, like, desc, asc, sql, count, getTableName } from "drizzle-orm";
// A home card (the manifest's `card`): reading an answer defensively and writing times as the home page does.
export { listIn, when, dayName, str, num, obj, CARD_LINES } from "./card.ts";
export type { CardDef, CardBody, CardLine, CardInput, CliDef, CliCtx, GeocoderDef } from "./plugin.ts";
// Fetching a URL someone else chose (a caller, a feed): every hop checked to be a public address, size and time capped.
export { guardedFetch, decodeText, type GuardedOptions, type GuardedAnswer } from "./upstream/pages/guarded.ts";
export { fetchReadable, fetchLimits, userAgent } from "./upstream/pages/page.ts";
export { plainFromHtml } from "./upstream/pages/readable.ts";
// Publishing: markdown made safe to serve, a plain public page, and taking back what `emit` announced.
export { renderMarkdown, plainText } from "./publish/markdown.ts";
export { escapeHtml, page as publicPage, notFoundPage } from "./publish/page.ts";
export { retract } from "./db/retract.ts";
// Which database ctx.db is ("sqlite" or "postgres"), for a query that uses an index only one of them has.
export { storeKind, lastly, type Lastly } from "./db/store.ts";
export { coordinates, locate, type Located, type LocationFields } from "./where.ts";
// Ids and secrets as the core makes them, and a caller's scopes kept in a column (work done later for them).
export { newId, newSecret } from "./auth/ids.ts";
export { intersectScopes, scopesText, scopesFromText } from "./auth/tokens.ts";
export { asHearthError } from "./errors.ts";
export type { FoundItem } from "./plugin.ts";
// Answers from a model: the JSON object in its text, and a title for a conversation.
export { jsonIn } from "./ai/json.ts";
export { titleByModel } from "./ai/title.ts";
export type { ToolDef } from "./ai/index.ts";
// Collecting from a provider on a schedule, and times that repeat.
export type { CollectionRound } from "./scheduler/index.ts";
export { freshness, pollMinutes, pollOnSchedule, warm, warnFailures, collectRound, mayCollect } from "./scheduler/collect.ts";
export { REPEATS, formatTime, parseTime, wallClock, zoneOffset, validZone, occurrence, occurrencesBetween, spansBetween, indexAtOrAfter, type Repeat, type Recurrence, type ParsedTime } from "./scheduler/recurrence.ts";
export { Zones, ianaZone, seriesOf, signedLengthOf } from "./scheduler/rule.ts";
// Rows a person owns, columns naming blobs, statements prepared once, and JSON nested too deep.
export { ownership } from "./owned.ts";
export { holdsBlobs } from "./blobs.ts";
export { prepared } from "./db/prepared.ts";
export { checkDepth } from "./validate.ts";
// Files shipped with Hearth, or the person's own in their place; secrets cut from a text shown to people.
export { settingJson } from "./config.ts";
export { readShippedJson } from "./shipped.ts";
export { scrub } from "./upstream/redact.ts";
// A CLI command's `--name value` flags.
export { parseFlags } from "./cli/args.ts";
// Payments: the x402 token the instance's settings name, and the largest top-up (ctx.ledger.topUp).
export { assetOf } from "./pay/x402.ts";
export { TOPUP_MAX } from "./pay/topup.ts";
