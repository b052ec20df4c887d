// The activity log: one entry for every call on every surface (dispatch
// writes them, core/audit/log.ts), read by the signed-in account at
// /activity, as a page or JSON, and exported whole as JSONL or CSV. It is not
// an API method: like /token, only the account's own session reads it.
import { findSession } from "../auth/sessions.ts";
import { asHearthError, unauthenticated } from "../errors.ts";
import { route } from "../http/app.ts";
import { errorResponse, jsonResponse } from "../http/respond.ts";
import { seeOther, wantsHtml } from "../http/pages/layout.ts";
import { defineModule } from "../module.ts";
import type { Runtime } from "../runtime.ts";
import { AuditLog } from "./log.ts";
import { auditMigrations } from "./migrations.ts";
import { activityPage } from "./page.ts";
import { eachEntry, filterOf, readLog, type AuditEntry } from "./read.ts";

const rid = () => crypto.randomUUID();
const PAGE = 50;

const COLUMNS = ["id", "at", "callId", "account", "via", "credential", "credentialName", "surface", "service", "method", "args", "argsHash", "credits", "paid", "outcome", "status", "approved"] as const;

/** What an entry says, for JSON and the export: the time as ISO, the preview as the object it is. */
export function shapeEntry(e: AuditEntry) {
  let args: unknown = e.args;
  try {
    args = JSON.parse(e.args);
  } catch {
    // A preview is always JSON; kept as text if not.
  }
  return { ...e, at: new Date(e.at).toISOString(), args };
}

const csvCell = (v: unknown) => {
  const s = v === null || v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v);
  // A cell starting like a formula is quoted with a leading apostrophe, so a spreadsheet opening the export runs nothing.
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
};

async function activityGet(rt: Runtime, req: Request): Promise<Response> {
  const html = wantsHtml(req);
  const s = await findSession(rt, req);
  const url = new URL(req.url);
  if (!s) {
    if (html) return seeOther(`/signin?next=${encodeURIComponent(url.pathname + url.search)}`);
    return errorResponse(unauthenticated("sign in first: POST /signin (or open /signin in a browser)"), rid());
  }
  try {
    const f = filterOf(url.searchParams);
    const rows = await readLog(rt, s.account.id, f, PAGE + 1);
    const next = rows.length > PAGE ? rows[PAGE - 1].id : null;
    const entries = rows.slice(0, PAGE);
    if (html) return activityPage(rt, s, { entries, next, query: url.searchParams });
    return jsonResponse(200, { result: { entries: entries.map(shapeEntry), next } }, rid(), { "cache-control": "no-store" });
  } catch (e) {
    const err = asHearthError(e);
    if (html) return activityPage(rt, s, { entries: [], next: null, query: url.searchParams, error: err.message, status: err.status });
    return errorResponse(err, rid());
  }
}

async function activityExport(rt: Runtime, req: Request, format: "jsonl" | "csv"): Promise<Response> {
  const s = await findSession(rt, req);
  if (!s) return errorResponse(unauthenticated("sign in first: POST /signin (or open /signin in a browser)"), rid());
  let f;
  try {
    f = filterOf(new URL(req.url).searchParams);
  } catch (e) {
    return errorResponse(e, rid());
  }
  const account = s.account.id;
  const enc = new TextEncoder();
  const rows = eachEntry(rt, account, f);
  let header = format === "csv";
  const body = new ReadableStream<Uint8Array>({
    async pull(ctl) {
      if (header) {
        header = false;
        ctl.enqueue(enc.encode(COLUMNS.join(",") + "\r\n"));
        return;
      }
      const { value, done } = await rows.next();
      if (done) return ctl.close();
      if (format === "jsonl") ctl.enqueue(enc.encode(JSON.stringify(shapeEntry(value)) + "\n"));
      else {
        const e = { ...value, at: new Date(value.at).toISOString() } as Record<string, unknown>;
        ctl.enqueue(enc.encode(COLUMNS.map((c) => csvCell(e[c])).join(",") + "\r\n"));
      }
    },
    async cancel() {
      await rows.return(undefined);
    },
  });
  const day = rt.clock.now().toISOString().slice(0, 10);
  return new Response(body, {
    headers: {
      "content-type": format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
      "content-disposition": `attachment; filename="hearth-activity-${day}.${format}"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
}

export const auditModule = defineModule({
  name: "audit",
  setup(rt) {
    const log = new AuditLog(rt);
    rt.audit = log;
    // What is held is written before the store closes.
    rt.onStop(() => log.flush());
  },
  provides: {
    migrations: { audit: auditMigrations },
    mounts: [
      (app, rt) => {
        app.get("/activity", route((c) => activityGet(rt, c.request)));
        app.get("/activity/export.jsonl", route((c) => activityExport(rt, c.request, "jsonl")));
        app.get("/activity/export.csv", route((c) => activityExport(rt, c.request, "csv")));
      },
    ],
  },
});
