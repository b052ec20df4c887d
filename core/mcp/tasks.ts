// MCP tasks: a tool call that would wait for the owner's approval answers at
// once with a task the client polls, instead of holding its request open for
// minutes. Both protocol eras: 2025-11-25's `tasks` utility (the client asks
// with `task` in tools/call; tasks/get, tasks/result, tasks/list,
// tasks/cancel) and 2026-07-28's Tasks extension (the client declares
// io.modelcontextprotocol/tasks; the server decides, answering
// resultType "task"; tasks/get carries the result, tasks/cancel and
// tasks/update acknowledge).
//
// A task is a row in the store, so a pending one outlives a restart and any
// instance can answer its poll. Nothing runs in the background: the call
// runs once its approval is settled, on the first poll (or blocking read)
// after, through dispatch with the poller's own credential, which must be
// the one that made the task. So it is charged exactly when it runs, once
// (the task is claimed before it runs, and its approval is used once), and
// not at all when declined, withdrawn or out of time.
import { and, desc, eq, lte } from "drizzle-orm";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Caller } from "../plugin.ts";
import type { MethodEntry } from "../registry.ts";
import type { Runtime } from "../runtime.ts";
import { invalid } from "../errors.ts";
import { approvalSeconds, type Approval, type RoundTrip } from "../policy/approvals.ts";
import { approvals, mcpTasks } from "../policy/schema.ts";
import { callTool } from "./call.ts";
import { INVALID_PARAMS, RpcError } from "./rpc.ts";
import { toolTable } from "./tools.ts";

/** The 2026-07-28 extension's name, in capabilities' `extensions`. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
/** The `_meta` key tying a message to its task. */
export const RELATED_TASK = "io.modelcontextprotocol/related-task";
/** The 2026-07-28 code for a request needing a capability the client did not declare. */
export const MISSING_CAPABILITY = -32021;

/** What a client is told to wait between polls: an approval is a person's act, seconds or minutes away. */
export const POLL_MS = 2000;
const HOUR_MS = 3_600_000;
const MAX_TTL_MS = 24 * HOUR_MS;
/** The most tasks one credential's tasks/list shows on a page. */
const PAGE = 50;

export type TaskRow = typeof mcpTasks.$inferSelect;
export type Era = "2025" | "2026";

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/**
 * Tells the client a task changed (2025-11-25's notifications/tasks/status):
 * set for a receiver that has a way to send it one (a session's stream,
 * stdio). The spec makes the notification optional and has clients poll
 * all the same, so one that cannot be delivered is dropped.
 */
export type TaskNotify = (t: TaskRow) => void;
export const isTerminal = (t: TaskRow) => TERMINAL.has(t.status);

/**
 * How long a task is kept: what the client asked, never less than its
 * approval may take to answer plus a minute to collect the result, never more
 * than a day (or the approval's time, when that is longer); an hour past the
 * approval's time when the client did not say.
 */
export function ttlOf(rt: Runtime, requested: number | null | undefined): number {
  const least = approvalSeconds(rt) * 1000 + 60_000;
  const want = typeof requested === "number" && Number.isFinite(requested) ? requested : approvalSeconds(rt) * 1000 + HOUR_MS;
  return Math.round(Math.min(Math.max(want, least), Math.max(MAX_TTL_MS, least)));
}

/** The credential a caller's tasks belong to: a token's, or its OAuth grant's (whose tokens rotate). Null for anyone else. */
export async function credentialOf(rt: Runtime, caller: Caller): Promise<string | null> {
  if (caller.via !== "token" || !caller.account || !rt.policies) return null;
  return (await rt.policies.of(caller)).credential;
}

/** Where a tools/call carries an x402 payment (the x402 MCP transport). */
const X402_PAYMENT = "x402/payment";

/**
 * Why a call held as a task cannot carry an x402 payment. The payment is
 * taken when the call runs, and a task runs on the client's first poll after
 * the owner approves, which may be long after; the authorization the payer
 * signed is good only for the instance's X402_MAX_TIMEOUT_SECONDS from when
 * it was signed. Taken at once instead, it would pay for a call that may
 * never run. So the call is refused before the owner is asked, and nothing
 * is verified, taken or charged.
 */
function heldPayment(rt: Runtime) {
  const good = Number(rt.config.X402_MAX_TIMEOUT_SECONDS || "120");
  return invalid(
    `_meta.${X402_PAYMENT}`,
    `this call waits for the owner's approval (up to ${approvalSeconds(rt)} s, and a task runs on the poll after it), but an x402 payment is taken only when the call runs and its authorization is good for ${good} s from signing, so a call held as a task cannot carry one. Nothing was asked, done or charged, and the payment was not taken: call again without _meta "${X402_PAYMENT}" to pay from the account's credits once the owner approves`,
  );
}

/**
 * The call's way to the owner when it runs as a task: the approval it makes
 * is caught rather than waited for (the request ends with a task instead).
 * A call paying with x402 (in `meta`) is refused before it is asked.
 */
export function taskTrip(rt: Runtime, meta?: Record<string, unknown>): { trip: RoundTrip; asked: () => Approval | null; refused: () => boolean } {
  let row: Approval | null = null;
  let refused = false;
  return {
    trip: {
      want(r) {
        row = r;
      },
      before() {
        if (meta?.[X402_PAYMENT] === undefined || meta[X402_PAYMENT] === null) return;
        refused = true;
        throw heldPayment(rt);
      },
    },
    asked: () => row,
    refused: () => refused,
  };
}

/** Keeps a new task for a call: waiting on its approval, or (2025-11-25, which asked for one) already done. */
export async function openTask(
  rt: Runtime,
  o: { caller: Caller; credential: string; entry: MethodEntry; args: Record<string, unknown> | undefined; approval: Approval | null; result: CallToolResult | null; ttl?: number | null },
): Promise<TaskRow> {
  const now = rt.clock.now().getTime();
  const ttl = ttlOf(rt, o.ttl);
  const waiting = o.approval !== null;
  const row: TaskRow = {
    id: crypto.randomUUID(),
    account: o.caller.account!.id,
    credential: o.credential,
    approval: o.approval?.id ?? null,
    tool: o.entry.tool,
    args: waiting ? JSON.stringify(o.args ?? {}) : null,
    status: waiting ? "working" : o.result?.isError ? "failed" : "completed",
    statusMessage: waiting ? `Waiting for the owner's approval on /approvals: asked because ${o.approval!.reason}.` : null,
    result: waiting ? null : JSON.stringify(o.result),
    created: now,
    updated: now,
    ttl,
    expires: now + ttl,
  };
  await rt.store.write(async () => {
    // Tasks past their time go as new ones come: nothing else needs to sweep them.
    await rt.store.wdb.delete(mcpTasks).where(lte(mcpTasks.expires, now)).run();
    await rt.store.wdb.insert(mcpTasks).values(row).run();
  });
  rt.log.info("task opened", { account: row.account, task: row.id, tool: row.tool, approval: row.approval, status: row.status });
  return row;
}

const gone = (id: string) => new RpcError(INVALID_PARAMS, `Failed to retrieve task: no task "${id}" for this credential (unknown, another credential's, or past its ttl)`, { taskId: id });

/** The caller's own task, still within its ttl; anyone else's, or an expired one, is not found. */
export async function ownTask(rt: Runtime, caller: Caller, id: unknown): Promise<TaskRow> {
  if (typeof id !== "string" || !id) throw new RpcError(INVALID_PARAMS, "Invalid params: taskId must be the task's id as a string", { field: "taskId" });
  const credential = await credentialOf(rt, caller);
  if (!credential) throw gone(id);
  const row = await rt.store.rdb
    .select()
    .from(mcpTasks)
    .where(and(eq(mcpTasks.id, id), eq(mcpTasks.credential, credential), eq(mcpTasks.account, caller.account!.id)))
    .get();
  if (!row || row.expires <= rt.clock.now().getTime()) throw gone(id);
  return row;
}

async function reread(rt: Runtime, id: string): Promise<TaskRow> {
  return (await rt.store.rdb.select().from(mcpTasks).where(eq(mcpTasks.id, id)).get())!;
}

/**
 * Moves a waiting task on if it can: once its approval is settled (or its
 * time is up) the call runs, once, as the poller, and what it answered is
 * kept. A task still waiting, or being run by another poll, is returned as it is.
 */
export async function advance(rt: Runtime, caller: Caller, task: TaskRow, baseUrl: string, notify?: TaskNotify): Promise<TaskRow> {
  if (task.status !== "working" || !task.approval) return task;
  const now = rt.clock.now().getTime();
  const asked = await rt.store.rdb.select().from(approvals).where(eq(approvals.id, task.approval)).get();
  if (asked && asked.decision === null && now < asked.expires) return task;
  // Claimed before it runs: of polls made at once, one runs the call and the others find it running.
  const claimed = await rt.store.write(() =>
    rt.store.wdb
      .update(mcpTasks)
      .set({ status: "running", updated: now, statusMessage: "Approved: the call is running." })
      .where(and(eq(mcpTasks.id, task.id), eq(mcpTasks.status, "working")))
      .returning({ id: mcpTasks.id })
      .all(),
  );
  if (!claimed.length) return reread(rt, task.id);
  notify?.(await reread(rt, task.id));
  let out: CallToolResult;
  const entry = toolTable(rt).byName.get(task.tool);
  if (!entry) out = refusal(`${task.tool} is no longer a tool here; nothing was done`, 404, "not_found");
  else {
    // The same call the client made, now carrying the settled approval: dispatch checks it is this call's, and uses it once.
    const trip: RoundTrip = { answered: { approval: task.approval, approve: null }, want() {} };
    out = await callTool(rt, { entry, args: JSON.parse(task.args ?? "{}") as Record<string, unknown>, caller, baseUrl, roundTrip: trip });
  }
  const done = rt.clock.now().getTime();
  await rt.store.write(() =>
    rt.store.wdb
      .update(mcpTasks)
      .set({ status: out.isError ? "failed" : "completed", result: JSON.stringify(out), args: null, updated: done, statusMessage: messageOf(out) })
      .where(and(eq(mcpTasks.id, task.id), eq(mcpTasks.status, "running")))
      .run(),
  );
  rt.log.info("task settled", { account: task.account, task: task.id, tool: task.tool, error: out.isError === true });
  const settledRow = await reread(rt, task.id);
  notify?.(settledRow);
  return settledRow;
}

/** A tool error in Hearth's one refusal shape. */
function refusal(message: string, status: number, kind: string, extra: Record<string, unknown> = {}): CallToolResult {
  const body = { error: { status, kind, message, retry: false, ...extra } };
  return { content: [{ type: "text", text: JSON.stringify(body) }], structuredContent: body, isError: true };
}

/** A settled task's message: the refusal's own words, or that it is done. */
function messageOf(out: CallToolResult): string {
  const err = (out.structuredContent as { error?: { message?: string } } | undefined)?.error;
  return out.isError ? (err?.message ?? "The call failed.") : "Done: the call ran and its result is ready.";
}

/**
 * The client withdraws its task: a waiting one is cancelled and its approval
 * request withdrawn, so it never runs and nothing is charged. False when it
 * had already run, or begun to.
 */
export async function cancelTask(rt: Runtime, task: TaskRow, notify?: TaskNotify): Promise<boolean> {
  if (task.status !== "working") return false;
  const now = rt.clock.now().getTime();
  const path = task.tool;
  const out = refusal(`${path} was cancelled by its client; nothing was done or charged`, 403, "forbidden", { approval: "withdrawn" });
  const changed = await rt.store.write(() =>
    rt.store.wdb
      .update(mcpTasks)
      .set({ status: "cancelled", result: JSON.stringify(out), args: null, updated: now, statusMessage: "Cancelled by the client; nothing was done." })
      .where(and(eq(mcpTasks.id, task.id), eq(mcpTasks.status, "working")))
      .returning({ id: mcpTasks.id })
      .all(),
  );
  if (!changed.length) return false;
  if (task.approval) await rt.approvals?.withdraw(task.account, task.approval);
  rt.log.info("task cancelled", { account: task.account, task: task.id });
  notify?.(await reread(rt, task.id));
  return true;
}

/**
 * Waits for a task to settle (2025-11-25's tasks/result blocks): on its
 * approval, then runs it; a task another request is running is looked at
 * again shortly.
 */
export async function settled(rt: Runtime, caller: Caller, task: TaskRow, baseUrl: string, signal?: AbortSignal, notify?: TaskNotify): Promise<TaskRow> {
  let t = await advance(rt, caller, task, baseUrl, notify);
  while (!isTerminal(t) && !signal?.aborted) {
    if (t.status === "working" && t.approval) await rt.approvals?.until(t.approval);
    else await Bun.sleep(100);
    t = await advance(rt, caller, await reread(rt, t.id), baseUrl, notify);
  }
  return t;
}

/** What a waiting task's message becomes once its approval is settled: the call runs on the client's next poll. */
const DECIDED: Record<string, string> = {
  approved: "Approved by the owner: the call runs on your next tasks/get or tasks/result.",
  declined: "Declined by the owner: nothing runs; tasks/result gives the refusal.",
  expired: "The owner's approval ran out of time: nothing runs; tasks/result gives the refusal.",
};

/**
 * Tells the client when the owner answers a waiting task (or its time runs
 * out), so it polls then rather than on its next interval. The call itself
 * still runs on that poll, with the poller's credential: nothing runs here.
 * A withdrawn approval is told by the cancel that withdrew it.
 */
function watch(rt: Runtime, t: TaskRow, notify: TaskNotify) {
  if (!t.approval || !rt.approvals) return;
  rt.approvals
    .until(t.approval)
    .then(async (a) => {
      const message = a?.decision ? DECIDED[a.decision] : undefined;
      const now = await rt.store.rdb.select().from(mcpTasks).where(eq(mcpTasks.id, t.id)).get();
      // A task a poll already moved on was told of then.
      if (message && now?.status === "working") notify({ ...now, statusMessage: message, updated: a!.decided ?? now.updated });
    })
    .catch((e) => rt.log.error("task watch failed", { task: t.id, error: String(e) }));
}

/** A credential's tasks still within their ttl, newest first, a page at a time (the cursor is where the next page starts). */
export async function listTasks(rt: Runtime, caller: Caller, cursor: unknown): Promise<{ rows: TaskRow[]; next?: string }> {
  const from = cursor === undefined ? 0 : Number(cursor);
  if (!Number.isSafeInteger(from) || from < 0 || (cursor !== undefined && typeof cursor !== "string"))
    throw new RpcError(INVALID_PARAMS, "Invalid params: cursor must be one a previous tasks/list gave", { field: "cursor" });
  const credential = await credentialOf(rt, caller);
  if (!credential) return { rows: [] };
  const now = rt.clock.now().getTime();
  const rows = (
    await rt.store.rdb
      .select()
      .from(mcpTasks)
      .where(and(eq(mcpTasks.credential, credential), eq(mcpTasks.account, caller.account!.id)))
      .orderBy(desc(mcpTasks.created), desc(mcpTasks.id))
      .limit(PAGE + 1)
      .offset(from)
      .all()
  ).filter((r) => r.expires > now);
  return rows.length > PAGE ? { rows: rows.slice(0, PAGE), next: String(from + PAGE) } : { rows };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** A task as 2025-11-25 shows it: a running call is still working, and a tool error is a failure. */
export function task2025(t: TaskRow) {
  const status = t.status === "running" ? "working" : t.status;
  return {
    taskId: t.id,
    status: status as "working" | "input_required" | "completed" | "failed" | "cancelled",
    ...(t.statusMessage ? { statusMessage: t.statusMessage } : {}),
    createdAt: iso(t.created),
    lastUpdatedAt: iso(t.updated),
    ttl: t.ttl,
    ...(isTerminal(t) ? {} : { pollInterval: POLL_MS }),
  };
}

/**
 * A task as the 2026-07-28 extension shows it, its result inline once there
 * is one. A refusal is a tool result with isError, so the task is
 * "completed" with it: the extension keeps "failed" for JSON-RPC errors.
 */
export function task2026(t: TaskRow) {
  const status = t.status === "running" ? "working" : t.status === "failed" ? "completed" : t.status;
  const out: Record<string, unknown> = {
    taskId: t.id,
    status,
    ...(t.statusMessage ? { statusMessage: t.statusMessage } : {}),
    createdAt: iso(t.created),
    lastUpdatedAt: iso(t.updated),
    ttlMs: t.ttl,
    pollIntervalMs: POLL_MS,
  };
  if (status === "completed" && t.result) out.result = JSON.parse(t.result);
  return out;
}

/** What tasks/result gives for a settled task: the tool result the call would have answered, tied to its task. */
export function resultOf(t: TaskRow): CallToolResult {
  const r = JSON.parse(t.result ?? "null") as CallToolResult | null;
  const out = r ?? refusal("the task has no result", 404, "not_found");
  return { ...out, _meta: { ...out._meta, [RELATED_TASK]: { taskId: t.id } } };
}

/** What a host may hand the model at once while the task waits (2025-11-25's provisional key). */
const IMMEDIATE = "io.modelcontextprotocol/model-immediate-response";

/**
 * tools/call as a task: the call goes through dispatch as ever, but an
 * approval it needs is caught instead of waited for, and the answer is the
 * task. A call that needs none runs at once: 2026-07-28 answers it as it is
 * (the server decides when a task is worth it); 2025-11-25, whose client
 * asked for a task, gets one already done.
 */
export async function callAsTask(
  rt: Runtime,
  o: { caller: Caller; baseUrl: string; entry: MethodEntry; args: Record<string, unknown> | undefined; meta?: Record<string, unknown>; ttl?: number | null; notify?: TaskNotify },
  era: Era,
): Promise<Record<string, unknown>> {
  const credential = await credentialOf(rt, o.caller);
  if (!credential) {
    if (era === "2026") return callTool(rt, { entry: o.entry, args: o.args, meta: o.meta, caller: o.caller, baseUrl: o.baseUrl });
    throw new RpcError(INVALID_PARAMS, "Invalid params: a task belongs to the credential that made it, so only a call made with a Bearer token can be one; call without `task`", { field: "task" });
  }
  const { trip, asked, refused } = taskTrip(rt, o.meta);
  const out = await callTool(rt, { entry: o.entry, args: o.args, meta: o.meta, caller: o.caller, baseUrl: o.baseUrl, roundTrip: trip });
  // A held call paying with x402: refused at the start, as a protocol error where the client asked for a task (2025-11-25), as the tool's refusal otherwise.
  if (refused() && era === "2025") {
    const body = out.structuredContent as { error: { message: string; field?: string } };
    throw new RpcError(INVALID_PARAMS, `Invalid params: ${body.error.message}`, { field: body.error.field, error: body.error });
  }
  const approval = asked();
  if (!approval && era === "2026") return out;
  const t = await openTask(rt, { caller: o.caller, credential, entry: o.entry, args: o.args, approval, result: approval ? null : out, ttl: o.ttl });
  if (approval && o.notify) watch(rt, t, o.notify);
  if (era === "2026") return { resultType: "task", ...task2026(t) };
  const meta = approval ? { [IMMEDIATE]: `${o.entry.path} waits for the owner's approval; its result comes with task ${t.id}.` } : undefined;
  return { task: task2025(t), ...(meta ? { _meta: meta } : {}) };
}
