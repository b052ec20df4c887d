// /settings/restore: the admin brings a backup back from the browser. A backup
// uploaded, or picked from HEARTH_BACKUP_TO, is decrypted with the passphrase
// or age secret key given (never kept) and read through with the checks
// `hearth restore` makes before it changes anything; then the page says
// what the backup holds and what it replaces, and asks again. Confirmed, it
// waits in the data folder's work area and `hearth serve` restores it at once,
// stopping and opening its runtime again around it (core/backup/inplace.ts);
// an instance not run by `hearth serve` restores it as it next starts
// (core/backup/staged.ts). A backup that is damaged, or not opened by the
// key given, is refused and nothing changes.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { CSRF_HEADER, findSession, requireCsrf, type Session } from "../auth/sessions.ts";
import { isSealed, unseal } from "../backup/crypt.ts";
import { destinationOf, BACKUP_NAME } from "../backup/destination.ts";
import { checkRestorable } from "../backup/snapshot.ts";
import { checkedInfo, checkedRestore, stagedRestore, workArea } from "../backup/staged.ts";
import { DIR_MODE } from "../private.ts";
import { asHearthError, forbidden, invalid, unauthenticated } from "../errors.ts";
import { jsonResponse } from "../http/respond.ts";
import { requireSameOrigin, type Posted } from "../http/pages/form.ts";
import { html, message, page, PAGE_CSP, seeOther, wantsHtml, type Html } from "../http/pages/layout.ts";
import { restoreFailure, type Runtime } from "../runtime.ts";
import { adminPost, adminSession, refusal, rid } from "./admin.ts";
import { largestBody } from "../http/body.ts";
import { receiveUpload, type Received } from "./upload.ts";

interface Checked {
  /** Where it came from: the file's name, or the backup's at the destination. */
  source: string;
  created: string;
  database: "sqlite" | "postgres";
  files: number;
  bytes: number;
  encrypted: boolean;
  /** What was done to it, in order: the progress the page shows. */
  steps: string[];
}

type State = { stage: "none" } | { stage: "checked" | "staged"; info: Checked };

async function stateOf(rt: Runtime): Promise<State> {
  const info = (await Bun.file(checkedInfo(rt.dataDir)).json().catch(() => null)) as Checked | null;
  if (info && existsSync(stagedRestore(rt.dataDir))) return { stage: "staged", info };
  if (info && existsSync(checkedRestore(rt.dataDir))) return { stage: "checked", info };
  return { stage: "none" };
}

const mb = (n: number) => (n < 1024 * 1024 ? `${Math.max(1, Math.round(n / 1024))} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`);
const stamp = (iso: string) => iso.slice(0, 16).replace("T", " ") + " UTC";

/** The age secret keys in what was pasted (age-keygen's file: comments and AGE-SECRET-KEY-1… lines). */
function identitiesOf(text: string): string[] {
  const keys = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.toUpperCase().startsWith("AGE-SECRET-KEY-"));
  if (text.trim() && !keys.length) throw invalid("identity", "paste the age secret key: a line AGE-SECRET-KEY-1…");
  return keys;
}

/** A folder of its own in the data folder's work area, for one backup being received and checked; the caller removes it. */
async function workFolder(rt: Runtime): Promise<string> {
  await mkdir(workArea(rt.dataDir), { recursive: true, mode: DIR_MODE });
  return mkdtemp(join(workArea(rt.dataDir), "upload-"));
}

/**
 * Reads a backup through and, when it passes, keeps it decrypted in the data
 * folder's work area for the admin to confirm. Works in `work`, a folder of
 * its own there that the caller removes: whatever fails, nothing else has
 * changed.
 */
async function check(rt: Runtime, work: string, source: { uploaded?: { path: string; name: string }; from?: string }, keys: { passphrase?: string; identity?: string }): Promise<Checked> {
  const identities = identitiesOf(keys.identity ?? "");
  const data = rt.dataDir;
  {
    const got = join(work, "backup");
    let name: string;
    if (source.uploaded) {
      name = source.uploaded.name || "uploaded file";
    } else {
      const from = source.from ?? "";
      if (!BACKUP_NAME.test(from)) throw invalid("from", "choose one of the backups listed, or upload a file");
      const dest = destinationOf(rt.config);
      if (!(await dest.list()).includes(from)) throw invalid("from", `there is no backup ${from} at ${dest.where}`);
      await dest.get(from, got);
      name = from;
    }
    const steps = [`Received ${name} (${mb(Bun.file(got).size)}).`];
    let plain = got;
    const encrypted = await isSealed(got);
    if (encrypted) {
      plain = join(work, "backup.tar");
      const passphrase = keys.passphrase || (identities.length ? "" : rt.config.HEARTH_BACKUP_PASSPHRASE);
      await unseal(got, plain, { passphrase: passphrase || undefined, identities });
      await rm(got);
      steps.push(`Decrypted with the ${identities.length ? "age key" : keys.passphrase ? "passphrase" : "instance's backup passphrase"}.`);
    }
    const c = await checkRestorable(plain, { postgres: rt.store.kind === "postgres" });
    steps.push(`Read through: ${c.files} files, each checked against its hash, and the ${c.database === "postgres" ? "PostgreSQL dump against the manifest's hash" : "database's integrity check"}.`);
    const info: Checked = { source: name, created: c.created, database: c.database, files: c.files, bytes: c.bytes, encrypted, steps };
    // Replacing one checked before and not confirmed; one already confirmed stays until cancelled.
    await rename(plain, checkedRestore(data));
    await Bun.write(checkedInfo(data), JSON.stringify(info));
    return info;
  }
}

async function cancel(rt: Runtime) {
  for (const f of [stagedRestore(rt.dataDir), checkedRestore(rt.dataDir), checkedInfo(rt.dataDir)]) await rm(f, { force: true });
}

async function listed(rt: Runtime): Promise<{ names: string[]; where: string | null; problem: string | null }> {
  try {
    const dest = destinationOf(rt.config);
    return { names: (await dest.list()).reverse(), where: dest.where, problem: null };
  } catch (e) {
    return { names: [], where: null, problem: asHearthError(e).message };
  }
}

function holds(info: Checked): Html {
  return html`<dl class="facts"><dt>Backup</dt><dd>${info.source}</dd><dt>Made</dt><dd>${stamp(info.created)}</dd><dt>Holds</dt><dd>${info.files} files, ${mb(info.bytes)}, a ${
    info.database === "postgres" ? "PostgreSQL" : "SQLite"
  } database</dd></dl>`;
}

interface View {
  notice?: string;
  error?: { field?: string; message: string };
  status?: number;
}

async function restorePage(rt: Runtime, s: Session, v: View = {}): Promise<Response> {
  const st = await stateOf(rt);
  const dest = await listed(rt);
  const hidden = html`<input type="hidden" name="csrf" value="${s.csrf}">`;
  const previous = `${workArea(rt.dataDir)}/before-restore-…`;
  const atOnce = !!rt.restoreNow;
  const progress = (info: Checked) =>
    html`<ol class="steps" aria-label="Progress">${info.steps.map((t) => html`<li>${t}</li>`)}<li>${st.stage === "staged" ? "Confirmed: restored when Hearth next starts." : "Waiting for you to confirm."}</li></ol>`;
  const when = atOnce
    ? html`<p>Confirmed, it is restored <strong>at once</strong>: Hearth stops taking calls for the moment it takes (they are answered “come back in a few seconds”), lets those in progress finish, restores, and serves the backup's data. <strong>You may need to sign in again</strong> afterwards: the accounts, passwords and sessions are those the backup holds. If the restore fails, nothing changes and this page says why.</p>`
    : html`<p>A database cannot be swapped under the instance that is using it, so the restore happens <strong>when Hearth next starts</strong>: confirm, then restart it (<code>systemctl restart hearth</code>, <code>docker restart hearth</code>, or stop and start <code>hearth serve</code>).</p>`;
  const pending =
    st.stage === "checked"
      ? html`<section class="confirm" aria-labelledby="confirm-title"><h2 id="confirm-title">Checked: restore this backup?</h2>
${progress(st.info)}${holds(st.info)}
<p><strong>Everything this instance holds now is replaced</strong> by what the backup holds: every account, password, session and token, every record and file. Whatever was made or changed after ${stamp(st.info.created)} is not in it.</p>
<p>The data there now is kept, not deleted: it is moved aside to <code>${previous}</code>${rt.store.kind === "postgres" ? html`, with a dump of the PostgreSQL database in it` : ""}.</p>
${when}
<div class="acts"><form method="post" action="/settings/restore">${hidden}<input type="hidden" name="action" value="confirm"><button type="submit" class="danger">${atOnce ? "Replace this instance's data now" : "Replace this instance's data at the next start"}</button></form>
<form method="post" action="/settings/restore">${hidden}<input type="hidden" name="action" value="cancel"><button type="submit" class="quiet">Cancel</button></form></div></section>`
      : st.stage === "staged"
        ? html`<section class="confirm" aria-labelledby="staged-title"><h2 id="staged-title">Ready: restored when Hearth next starts</h2>
${progress(st.info)}${holds(st.info)}
<p>Restart Hearth to bring it back; the data there now is moved aside to <code>${previous}</code>. Until then nothing has changed.</p>
<form method="post" action="/settings/restore">${hidden}<input type="hidden" name="action" value="cancel"><button type="submit" class="quiet">Cancel the restore</button></form></section>`
        : "";
  const last = rt.lastRestore;
  const outcome = !last
    ? ""
    : last.ok
      ? message("notice", `Restored ${last.source} at ${stamp(last.at)}: this instance now serves the backup's data.${last.previous ? ` What was here before is kept in ${last.previous}.` : ""}`)
      : message("alert", `The restore of ${last.source} at ${stamp(last.at)} failed; ${restoreFailure(last.reason)}.`);
  const wrong = (f: string) => (v.error?.field === f ? html` aria-invalid="true"` : "");
  const body = html`${outcome}${message("notice", v.notice)}${v.error ? message("alert", v.error.message) : ""}${pending}
<p>Bring this instance back to a backup: one of the scheduled backups at the destination, or a file you kept (a <code>hearth-….tar.age</code>, or a <code>.tar</code> from <code>hearth backup</code>). It is read through first, with the checks <code>hearth restore</code> makes; a backup that is damaged, or that the key given does not open, is refused and nothing changes.</p>
<form method="post" action="/settings/restore" enctype="multipart/form-data" id="r-check" data-max="${uploadCap(rt)}">${hidden}<input type="hidden" name="action" value="check">
<fieldset><legend>Which backup</legend>
${
  dest.names.length
    ? html`<label for="r-from">From ${dest.where}</label><select id="r-from" name="from"${wrong("from")}><option value="">Choose a backup…</option>${dest.names.map((n) => html`<option>${n}</option>`)}</select>`
    : html`<p class="hint">${dest.problem ? html`No scheduled backups to choose from: ${dest.problem}` : html`There are no backups at ${dest.where} yet.`}</p>`
}
<label for="r-file">${dest.names.length ? "Or upload a file" : "Upload a file"}</label>
<input type="file" id="r-file" name="file" accept=".age,.tar" aria-describedby="r-file-hint"${wrong("file")}>
<p class="hint" id="r-file-hint">Up to ${mb(uploadCap(rt))}. A larger backup: put it in <code>HEARTH_BACKUP_TO</code> and pick it from the list, or run <code>hearth restore</code> on the server.</p>
<p class="alert" role="alert" id="r-upload-error" hidden></p>
<div id="r-upload" class="upload" hidden><progress id="r-progress" max="100" value="0" aria-label="Upload of the backup"></progress>
<span id="r-progress-text" role="status"></span> <button type="button" id="r-abort" class="quiet">Stop the upload</button></div>
</fieldset>
<fieldset><legend>Its key, when it is encrypted</legend>
<label for="r-passphrase">Passphrase</label>
<input type="password" id="r-passphrase" name="passphrase" autocomplete="off" aria-describedby="r-passphrase-hint">
<p class="hint" id="r-passphrase-hint">Empty: the instance's own backup passphrase${rt.config.HEARTH_BACKUP_PASSPHRASE ? "" : " (none is set)"}. Neither the passphrase nor the key is kept.</p>
<label for="r-identity">Or the age secret key</label>
<textarea id="r-identity" name="identity" rows="3" spellcheck="false" autocomplete="off" aria-describedby="r-identity-hint"${wrong("identity")}></textarea>
<p class="hint" id="r-identity-hint">The AGE-SECRET-KEY-1… line of the key file, for backups encrypted to HEARTH_BACKUP_RECIPIENTS.</p>
</fieldset>
<p><button type="submit">Check the backup</button></p>
<p class="hint">Checking a large backup takes a while: the page answers once it is read through.</p>
</form>`;
  return page({ title: "Restore a backup", body, account: s.account, csrf: s.csrf, status: v.status, head: html`${STYLE}<script src="/settings/restore.js" defer></script>`, csp: CSP, path: "/settings" });
}

/** The pages' policy, with the upload's own script (/settings/restore.js). */
const CSP = PAGE_CSP.replace("default-src 'none';", "default-src 'none'; script-src 'self';");

const STYLE = html`<style>
[hidden]{display:none!important}
.upload{display:flex;flex-wrap:wrap;gap:.5rem .75rem;align-items:center;margin:.75rem 0}.upload progress{width:100%;max-width:24rem;height:1rem;accent-color:var(--accent)}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:1rem 0}.facts dt{font-weight:600}.facts dd{margin:0;overflow-wrap:anywhere}
.confirm{border:1px solid var(--line);border-radius:.5rem;padding:0 1rem 1rem;margin:1rem 0}
.steps li{margin:.2rem 0}
.acts{display:flex;flex-wrap:wrap;gap:.75rem;align-items:center}.acts form{margin:0}
button.danger{background:var(--bad);border-color:var(--bad)}
textarea{width:100%;max-width:36rem;font:.95rem/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;padding:.5rem;border:1px solid var(--muted);border-radius:.4rem;background:var(--field);color:var(--fg)}
input[type=file]{font:inherit;max-width:100%}
code{overflow-wrap:anywhere}
</style>`;

const shaped = (info: Checked, stage: string) => ({ stage, ...info });

export async function restoreGet(rt: Runtime, req: Request): Promise<Response> {
  const s = await adminSession(rt, req);
  if (s instanceof Response) return s;
  if (!wantsHtml(req)) {
    const st = await stateOf(rt);
    const dest = await listed(rt);
    const last = rt.lastRestore ? { last: rt.lastRestore } : {};
    return jsonResponse(200, { result: { ...(st.stage === "none" ? { stage: "none" } : shaped(st.info, st.stage)), backups: dest.names, ...last } }, rid(), { "cache-control": "no-store" });
  }
  return restorePage(rt, s);
}

/** The most an upload may be: what the server takes in one request at all (its backstop, set at start). */
export const uploadCap = (rt: Runtime) => largestBody(rt);

/**
 * An upload's form: the admin's session and its CSRF token, as adminPost
 * checks them for a small form, and the file, received into `work` as it
 * arrives (./upload.ts). A refusal is the answer to give instead.
 */
async function uploadPost(rt: Runtime, req: Request, work: { path: string | null }): Promise<{ s: Session; received: Received } | Response> {
  let s: Session | null = null;
  try {
    requireSameOrigin(req);
    s = await findSession(rt, req);
    if (!s) throw unauthenticated("sign in first: POST /signin (or open /signin in a browser)");
    if (!s.account.admin) throw forbidden("only an admin of this instance may restore a backup");
    const session = s;
    const allowed = (csrf: string | undefined) => requireCsrf(session, req.headers.get(CSRF_HEADER) ?? csrf);
    // Made once the request is known to be an admin's, so a stranger's upload makes nothing.
    work.path = await workFolder(rt);
    const received = await receiveUpload(req, work.path, uploadCap(rt), allowed);
    // A form without a file still carries the token, checked here.
    if (!received.file) allowed(received.fields.get("csrf"));
    return { s, received };
  } catch (e) {
    const err = asHearthError(e);
    if (!s || err.status === 401 || err.status === 403 || !wantsHtml(req)) return refusal(err, !wantsHtml(req), null);
    return restorePage(rt, s, { error: { field: err.field, message: `Not restored, nothing changed: ${err.message}` }, status: err.status });
  }
}

export async function restorePost(rt: Runtime, req: Request): Promise<Response> {
  const multipart = (req.headers.get("content-type") ?? "").toLowerCase().startsWith("multipart/form-data");
  if (!multipart) return restoreAct(rt, req, null);
  const work = { path: null as string | null };
  try {
    return await restoreAct(rt, req, work);
  } finally {
    // The upload and anything made of it: kept only as the checked backup, which check moved out.
    if (work.path) await rm(work.path, { recursive: true, force: true });
  }
}

async function restoreAct(rt: Runtime, req: Request, received: { path: string | null } | null): Promise<Response> {
  let s: Session;
  let get: (n: string) => string | undefined;
  let upload: Received["file"] = null;
  let json: boolean;
  if (received) {
    const got = await uploadPost(rt, req, received);
    if (got instanceof Response) return got;
    s = got.s;
    get = (n) => got.received.fields.get(n);
    upload = got.received.file;
    json = !wantsHtml(req);
  } else {
    const got = await adminPost(rt, req);
    if (got instanceof Response) return got;
    s = got.s;
    const posted: Posted = got.posted;
    get = (n) => posted.get(n);
    json = posted.json;
  }
  const answer = (result: Record<string, unknown>, v: View) => (json ? jsonResponse(200, { result }, rid(), { "cache-control": "no-store" }) : restorePage(rt, s, v));
  try {
    const action = get("action");
    if (action === "check") {
      const from = get("from");
      if (!upload && !from) throw invalid("file", "choose a backup from the list, or upload a file");
      const keys = { passphrase: get("passphrase") || undefined, identity: get("identity") || undefined };
      // An upload's folder is removed by restorePost; one for a backup fetched from the destination, here.
      const own = !received?.path;
      const into = received?.path ?? (await workFolder(rt));
      let info: Checked;
      try {
        info = await check(rt, into, upload ? { uploaded: upload } : { from }, keys);
      } finally {
        if (own) await rm(into, { recursive: true, force: true });
      }
      rt.log.info("backup checked for a restore", { account: s.account.id, source: info.source, created: info.created });
      if (!json) return seeOther("/settings/restore#confirm-title");
      return answer(shaped(info, "checked"), {});
    }
    if (action === "confirm") {
      const st = await stateOf(rt);
      if (st.stage !== "checked") throw invalid("action", st.stage === "staged" ? "this backup is confirmed already: restart Hearth to restore it" : "check a backup first");
      await rename(checkedRestore(rt.dataDir), stagedRestore(rt.dataDir));
      if (rt.restoreNow) {
        rt.log.info("restore confirmed: it runs at once", { account: s.account.id, source: st.info.source });
        // From here every new request is answered "restoring" until the instance is back; the browser lands on that page.
        rt.restoreNow(st.info.source);
        return json ? answer(shaped(st.info, "restoring"), {}) : seeOther("/settings/restore");
      }
      rt.log.info("restore confirmed: it runs at the next start", { account: s.account.id, source: st.info.source });
      return answer(shaped(st.info, "staged"), { notice: "Confirmed. Restart Hearth to restore the backup." });
    }
    if (action === "cancel") {
      await cancel(rt);
      return answer({ stage: "none" }, { notice: "Cancelled: no backup is waiting to be restored." });
    }
    throw invalid("action", `say what to do: check, confirm or cancel (got "${action ?? ""}")`);
  } catch (e) {
    const err = asHearthError(e);
    if (json || err.status === 401 || err.status === 403) return refusal(err, json, s, "/settings/restore");
    return restorePage(rt, s, { error: { field: err.field, message: `Not restored, nothing changed: ${err.message}` }, status: err.status });
  }
}
