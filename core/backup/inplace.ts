// A restore confirmed on /settings/restore, done at once by the serving
// process: no restart for the admin to make. The listener keeps its port and
// answers every new request with a 503 (Retry-After, and for a browser a page
// that follows the progress); the calls in progress finish; the runtime stops
// (plugins' stop hooks, the schedulers, the audit log's flush, the shared
// state's connections, the live streams, the store); the staged backup is
// restored as `hearth restore --force` restores (all or nothing, what was
// there kept in the work area); and a new runtime opens on the data folder,
// restored or, when the restore failed, as it was, and takes the calls again.
// The restored data is opened before the restore counts as done: when this
// build cannot open it (a migration fails, a newer Hearth's schema), the
// data before is put back (./swap.ts) and opened, and the page says why.
//
// In the same process rather than by re-executing it: a process cannot
// replace itself from Bun, and a child started in its place would leave a
// container whose first process has exited, or a service manager following
// the wrong process. Nothing is carried over from the old runtime: the new
// one is made the way `hearth serve` makes one at start.
import { HearthError } from "../errors.ts";
import type { Listening } from "../http/serve.ts";
import { errorResponse } from "../http/respond.ts";
import { html, page, wantsHtml } from "../http/pages/layout.ts";
import type { Logger } from "../plugin.ts";
import type { RestoreOutcome, Runtime } from "../runtime.ts";
import { keepOutcome, restoreStaged } from "./staged.ts";

/** How long the calls in progress may take to finish before the runtime stops under them (a slow upstream call, a long poll). */
const DRAIN_MS = 60_000;
/** Seconds a client is told to wait before it asks again. */
const RETRY_AFTER = "5";

/** What the page lists while the restore runs, in order. */
export const PHASES = ["Finishing the calls in progress", "Closing the database and the scheduled work", "Restoring the backup", "Opening the data again"] as const;

interface Serving {
  listening: Listening;
  /** A new runtime on the data folder, as `hearth serve` makes one at start: created and started, or stopped again and the error thrown. */
  open(): Promise<Runtime>;
  /** Told of each runtime that takes over, so a signal stops the one serving. */
  serving(rt: Runtime): void;
  log: Logger;
}

/** Makes `rt` restore at once when the admin confirms, and each runtime that takes over after it. */
export function restoreAtOnce(rt: Runtime, s: Serving) {
  let running = false;
  rt.restoreNow = (source) => {
    if (running) return;
    running = true;
    void run(rt, source, s).catch((e) => {
      // Nothing is left to serve from: a supervisor (systemd, Docker's restart policy) starts the process again on the data folder.
      s.log.error("the instance could not be opened again after a restore", { error: String((e as Error)?.stack ?? e) });
      process.exit(1);
    });
  };
}

async function run(old: Runtime, source: string, s: Serving) {
  const at = old.clock.now().toISOString();
  let phase = 0;
  const { unfinished } = await s.listening.pause((req) => unavailable(req, source, phase), DRAIN_MS);
  if (unfinished) s.log.warn("restoring with calls still in progress: they were given a minute", { unfinished });
  phase = 1;
  const config = old.config;
  try {
    await old.stop();
  } catch (e) {
    s.log.error("stopping the instance for a restore did not finish cleanly", { error: String(e) });
  }
  phase = 2;
  // The restored data is opened as part of the restore: data this build cannot open (a failed migration, a newer schema) is undone there, and the data before opened instead.
  const opened: { rt: Runtime | null } = { rt: null };
  const r = await restoreStaged(config, s.log, async () => {
    opened.rt = await s.open();
  });
  phase = 3;
  const outcome: RestoreOutcome =
    r && "ok" in r ? { source, at, ok: true, previous: r.ok.previous } : { source, at, ok: false, reason: r ? r.failed : "the confirmed backup was not found in the data folder's .restore" };
  const next = opened.rt ?? (await s.open());
  next.lastRestore = outcome;
  await keepOutcome(next.dataDir, outcome, s.log);
  restoreAtOnce(next, s);
  s.serving(next);
  s.listening.resume(next);
  s.log.info(outcome.ok ? "serving the restored data" : "serving the data as it was: the restore failed", { source });
}

/** The answer while a restore runs: a 503 to come back, and for a browser a page that follows the progress. */
export function unavailable(req: Request, source: string, phase: number): Response {
  const headers = { "retry-after": RETRY_AFTER };
  if (!wantsHtml(req)) return errorResponse(new HearthError("storage_unavailable", "the instance is restoring a backup: send the call again in a few seconds", { retry: true, headers }), crypto.randomUUID());
  const steps = PHASES.map((p, i) => (i < phase ? html`<li class="done">${p}: done</li>` : i === phase ? html`<li aria-current="step"><strong>${p}…</strong></li>` : html`<li class="todo">${p}</li>`));
  const body = html`<p class="notice" role="status">Restoring ${source}. Hearth is not taking calls until it is back, in a moment; this page follows it and shows the outcome.</p>
<ol class="steps" aria-label="Progress">${steps}</ol>
<p>Afterwards you may need to sign in again: the accounts, passwords and sessions are those the backup holds.</p>`;
  return page({
    title: "Restoring a backup",
    body,
    status: 503,
    headers,
    // Asked again every two seconds; once the instance is back this lands on /settings/restore, which says how it went.
    head: html`<meta http-equiv="refresh" content="2; url=/settings/restore"><style>.steps li{margin:.3rem 0}.steps .todo{color:var(--muted)}</style>`,
  });
}
