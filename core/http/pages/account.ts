// /account: a signed-in person's own sign-in. Change the password (other
// browsers are signed out), see where they are signed in and sign any of
// those out, two-factor sign-in with an authenticator app and recovery
// codes, and passkeys. Forms post back here and land on the page again;
// programs holding a session get JSON from the same routes.
import { renderSVG } from "uqr";
import { deviceCookie } from "../../auth/devices.ts";
import { changePassword, PASSWORD_MIN } from "../../auth/people.ts";
import { finishRegistration, listPasskeys, PASSKEY_NAME_MAX, registrationOptions, removePasskey, renamePasskey, type PasskeyInfo } from "../../auth/passkeys.ts";
import { CSRF_HEADER, endOtherSessions, endSessionById, findSession, listSessions, requireCsrf, type Session, type SessionInfo } from "../../auth/sessions.ts";
import { confirmTotp, disableTotp, RECOVERY_CODES, renewRecoveryCodes, startTotp, totpState, totpUri, type TotpState } from "../../auth/totp.ts";
import { totpSecrets } from "../../db/schema.ts";
import { and, eq, isNull } from "drizzle-orm";
import { asHearthError, invalid, notFound, unauthenticated, type HearthError } from "../../errors.ts";
import type { Runtime } from "../../runtime.ts";
import { errorResponse, jsonResponse } from "../respond.ts";
import { readPosted, type Posted } from "./form.ts";
import { html, message, page, seeOther, wantsHtml, type Html } from "./layout.ts";
import { passkeyHead, SIGNIN_CSP } from "./signinshell.ts";
import { takeNotices } from "../../settings/notices.ts";

const rid = () => crypto.randomUUID();
const when = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString().slice(0, 16).replace("T", " ") + " UTC");

const STYLE = html`<style>
.qr{display:block;width:13rem;height:13rem;background:#fff;padding:.5rem;border-radius:.4rem;border:1px solid var(--line)}
.codes{columns:2;font:1rem/1.8 ui-monospace,SFMono-Regular,Menlo,monospace;padding-left:2rem}
.inline{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.25rem 0}
.inline input[type=text]{width:auto;flex:1 1 10rem;min-width:8rem}
.steps li{margin:.5rem 0}
td form{margin:0}
td button{white-space:nowrap}
</style>`;

/** What a post may hand the page to show once (new recovery codes), besides a notice or a refusal. */
interface Extra {
  notice?: string;
  /** What someone else changed of how the person signs in, shown once (settings/notices.ts). */
  told?: string[];
  error?: string;
  errorAt?: string;
  codes?: string[];
  status?: number;
  headers?: Record<string, string>;
}

const DONE: Record<string, string> = {
  password: "Your password is changed. Every other browser signed in as you is signed out; this one stays signed in.",
  "signed-out": "That browser is signed out.",
  "others-out": "Every other browser is signed out.",
  "totp-off": "Two-factor sign-in is off: signing in asks for your password alone.",
  "totp-cancelled": "The authenticator app was not set up.",
  "passkey-added": "The passkey is added: on the sign-in page, choose “Sign in with a passkey”.",
  "passkey-renamed": "The passkey is renamed.",
  "passkey-removed": "The passkey is removed: it no longer signs you in.",
};

function passwordPart(s: Session, x: Extra): Html {
  return html`<h2 id="password">Password</h2>
${x.errorAt === "password" ? message("alert", x.error) : ""}
<form method="post" action="/account/password">
<input type="hidden" name="csrf" value="${s.csrf}">
<input type="text" name="username" value="${s.account.username}" autocomplete="username" hidden>
<label for="current">Current password</label>
<input type="password" id="current" name="current" autocomplete="current-password" required>
<label for="new-password">New password</label>
<p class="hint" id="new-password-hint">At least ${PASSWORD_MIN} characters. Every other browser signed in as you is signed out; this one stays.</p>
<input type="password" id="new-password" name="password" autocomplete="new-password" minlength="${PASSWORD_MIN}" aria-describedby="new-password-hint" required>
<p><button type="submit">Change password</button></p>
</form>`;
}

function sessionsPart(s: Session, list: SessionInfo[], x: Extra): Html {
  const others = list.filter((l) => !l.current).length;
  return html`<h2 id="sessions">Where you are signed in</h2>
${x.errorAt === "sessions" ? message("alert", x.error) : ""}
<table>
<thead><tr><th scope="col">Browser</th><th scope="col">Signed in</th><th scope="col">Last seen</th><th scope="col"><span class="hint">Action</span></th></tr></thead>
<tbody>
${list.map(
  (l) => html`<tr>
<td data-label="Browser">${l.browser ?? "Unknown browser"}${l.current ? html` <strong>(this browser)</strong>` : ""}</td>
<td data-label="Signed in">${when(l.created)}</td>
<td data-label="Last seen">${when(l.lastSeen)}</td>
<td>${
    l.current
      ? html`<span class="hint">You are here</span>`
      : html`<form method="post" action="/account/sessions/end"><input type="hidden" name="csrf" value="${s.csrf}"><input type="hidden" name="id" value="${l.id}">
<button class="quiet" type="submit" aria-label="Sign out ${l.browser ?? "unknown browser"}, signed in ${when(l.created)}">Sign out</button></form>`
  }</td>
</tr>`,
)}
</tbody>
</table>
${
  others > 0
    ? html`<form method="post" action="/account/sessions/end-others"><input type="hidden" name="csrf" value="${s.csrf}"><p><button class="quiet" type="submit">Sign out every other browser (${others})</button></p></form>`
    : html`<p class="hint">You are signed in on this browser only.</p>`
}`;
}

function qrImage(uri: string): Html {
  const svg = renderSVG(uri, { border: 1 });
  return html`<img class="qr" src="data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}" alt="QR code of the link below, for your authenticator app" width="208" height="208">`;
}

function proofField(id: string, s: Session): Html {
  return html`<input type="hidden" name="csrf" value="${s.csrf}">
<label for="${id}">A code from your app, a recovery code, or your password</label>
<input type="password" id="${id}" name="proof" autocomplete="off" required>`;
}

function twoFactorPart(rt: Runtime, req: Request, s: Session, t: TotpState, x: Extra): Html {
  const host = new URL(rt.config.HEARTH_PUBLIC_URL || req.url).host;
  const err = x.errorAt === "two-factor" ? message("alert", x.error) : "";
  const codes = x.codes
    ? html`<section class="notice" aria-labelledby="codes-title">
<h3 id="codes-title">Your recovery codes</h3>
<p>Keep these somewhere safe, away from your phone: each signs you in once when the app is not at hand. They are shown only now.</p>
<ol class="codes" id="recovery-codes">${x.codes.map((c) => html`<li>${c}</li>`)}</ol>
</section>`
    : "";
  const tokens = html`<p class="hint">Tokens and app passwords are not affected: they are credentials of their own and are never asked for a code. Revoke those you no longer use on <a href="/token">Tokens</a>.</p>`;
  if (t.on)
    return html`<h2 id="two-factor">Two-factor sign-in</h2>
${err}${codes}
<p><strong>On</strong> since ${when(t.since)}. After your password, signing in asks for a code from your authenticator app. ${t.recoveryLeft} of ${RECOVERY_CODES} recovery codes are unused.</p>
${tokens}
<form method="post" action="/account/totp/recovery">
${proofField("totp-proof", s)}
<p class="inline"><button class="quiet" type="submit">Make new recovery codes</button>
<button class="quiet" type="submit" formaction="/account/totp/off">Turn two-factor sign-in off</button></p>
</form>`;
  if (t.pending) {
    const uri = totpUri(t.pending, s.account.username, host);
    return html`<h2 id="two-factor">Two-factor sign-in</h2>
${err}
<ol class="steps">
<li>In your authenticator app (Aegis, 2FAS, Google Authenticator, 1Password, …), add an account by scanning this code:
${qrImage(uri)}</li>
<li>No camera? Open <a href="${uri}">this otpauth link</a> on the phone, or type the key <code class="secret" id="totp-secret">${t.pending.replace(/(.{4})/g, "$1 ").trim()}</code></li>
<li><form method="post" action="/account/totp/confirm"><input type="hidden" name="csrf" value="${s.csrf}">
<label for="totp-code">The six-digit code the app now shows</label>
<input type="text" id="totp-code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,7}" maxlength="7" required>
<p><button type="submit">Turn on two-factor sign-in</button></p></form></li>
</ol>
<form method="post" action="/account/totp/cancel"><input type="hidden" name="csrf" value="${s.csrf}"><button class="quiet" type="submit">Cancel</button></form>`;
  }
  return html`<h2 id="two-factor">Two-factor sign-in</h2>
${err}
<p><strong>Off.</strong> With it on, signing in asks for a six-digit code from an authenticator app on your phone after your password, so a password alone no longer gets anyone in. You also get ${RECOVERY_CODES} one-use recovery codes for when the phone is lost.</p>
${tokens}
<form method="post" action="/account/totp/start"><input type="hidden" name="csrf" value="${s.csrf}"><p><button type="submit">Set up an authenticator app</button></p></form>`;
}

function passkeysPart(s: Session, list: PasskeyInfo[], x: Extra): Html {
  return html`<h2 id="passkeys">Passkeys</h2>
${x.errorAt === "passkeys" ? message("alert", x.error) : ""}
<p>A passkey signs you in with your device's screen lock, fingerprint or a security key: no username, password or code to type.</p>
${
  list.length
    ? html`<table>
<thead><tr><th scope="col">Name</th><th scope="col">Added</th><th scope="col">Last used</th><th scope="col"><span class="hint">Action</span></th></tr></thead>
<tbody>
${list.map(
  (p, i) => html`<tr>
<td data-label="Name"><form method="post" action="/account/passkeys/rename" class="inline"><input type="hidden" name="csrf" value="${s.csrf}"><input type="hidden" name="id" value="${p.id}">
<input type="text" name="name" value="${p.name}" maxlength="${PASSKEY_NAME_MAX}" aria-label="Name of passkey ${i + 1}" required><button class="quiet" type="submit" aria-label="Rename passkey ${i + 1}">Rename</button></form></td>
<td data-label="Added">${when(p.created)}</td>
<td data-label="Last used">${when(p.lastUsed) ?? "Never"}</td>
<td><form method="post" action="/account/passkeys/remove"><input type="hidden" name="csrf" value="${s.csrf}"><input type="hidden" name="id" value="${p.id}">
<button class="quiet" type="submit" aria-label="Remove ${p.name}">Remove</button></form></td>
</tr>`,
)}
</tbody>
</table>`
    : html`<p>You have no passkeys yet.</p>`
}
<form id="passkey-add" hidden>
<label for="passkey-name">Name of the new passkey</label>
<p class="hint" id="passkey-name-hint">Where it lives, so you know it again: "laptop", "phone", "security key".</p>
<input type="text" id="passkey-name" name="name" maxlength="${PASSKEY_NAME_MAX}" aria-describedby="passkey-name-hint" required>
<p><button type="submit">Add a passkey</button></p>
<p class="alert" id="passkey-add-status" role="alert" hidden></p>
</form>
<noscript><p class="hint">Adding a passkey needs JavaScript: the browser's passkey prompt is opened by a script.</p></noscript>`;
}

async function accountPage(rt: Runtime, req: Request, s: Session, x: Extra = {}): Promise<Response> {
  const [list, t, keys] = await Promise.all([listSessions(rt, s), totpState(rt, s.account.id), listPasskeys(rt, s.account.id)]);
  const top = x.errorAt ? "" : message("alert", x.error);
  const told = x.told?.length ? html`<section class="notice" role="status" aria-label="Changed while you were away">${x.told.map((t) => html`<p>${t}</p>`)}</section>` : "";
  const body = html`${top}${told}${message("notice", x.notice)}
<p>How you sign in to this instance, and where you are signed in. Programs and agents use <a href="/token">tokens</a> instead.</p>
${passwordPart(s, x)}
${sessionsPart(s, list, x)}
${twoFactorPart(rt, req, s, t, x)}
${passkeysPart(s, keys, x)}`;
  return page({ title: "Account", body, account: s.account, csrf: s.csrf, status: x.status, headers: x.headers, csp: SIGNIN_CSP, head: html`${STYLE}${passkeyHead}` });
}

export async function accountGet(rt: Runtime, req: Request): Promise<Response> {
  const s = await findSession(rt, req);
  if (!s) {
    if (wantsHtml(req)) return seeOther("/signin?next=/account");
    return errorResponse(unauthenticated("sign in first: POST /signin (or open /signin in a browser)"), rid());
  }
  if (!wantsHtml(req)) {
    const [list, t, keys] = await Promise.all([listSessions(rt, s), totpState(rt, s.account.id), listPasskeys(rt, s.account.id)]);
    return jsonResponse(
      200,
      {
        result: {
          username: s.account.username,
          sessions: list.map((l) => ({ id: l.id, browser: l.browser, created: new Date(l.created).toISOString(), last_seen: new Date(l.lastSeen).toISOString(), current: l.current })),
          two_factor: { on: t.on, since: t.since === null ? null : new Date(t.since).toISOString(), recovery_codes_left: t.recoveryLeft },
          passkeys: keys.map((k) => ({ id: k.id, name: k.name, created: new Date(k.created).toISOString(), last_used: k.lastUsed === null ? null : new Date(k.lastUsed).toISOString() })),
        },
      },
      rid(),
      { "cache-control": "no-store" },
    );
  }
  const done = new URL(req.url).searchParams.get("done");
  const told = await takeNotices(rt, s.account.id);
  return accountPage(rt, req, s, { notice: done ? DONE[done] : undefined, told });
}

/** What an action on this page answers: JSON for programs; for a form, where to land or the page with something to show once. */
type Outcome = { json: unknown; done?: string; page?: Extra; headers?: Record<string, string> };

/**
 * One action of the page: a session and its CSRF token (the header, or the
 * form's hidden field) are required; a refusal shows the page again with the
 * reason beside the part it concerns.
 */
function action(part: string, run: (rt: Runtime, req: Request, s: Session, posted: Posted, address: string) => Promise<Outcome>) {
  return async (rt: Runtime, req: Request, address: string): Promise<Response> => {
    let posted: Posted | null = null;
    let s: Session | null = null;
    try {
      posted = await readPosted(rt, req);
      s = await findSession(rt, req);
      if (!s) {
        if (!posted.json) return seeOther("/signin?next=/account");
        throw unauthenticated("sign in first: POST /signin (or open /signin in a browser)");
      }
      requireCsrf(s, req.headers.get(CSRF_HEADER) ?? (posted.json ? undefined : posted.get("csrf")));
      const out = await run(rt, req, s, posted, address);
      if (posted.json) return jsonResponse(200, { result: out.json }, rid(), { "cache-control": "no-store", ...(out.headers ?? {}) });
      if (out.page) return accountPage(rt, req, s, { ...out.page, headers: { ...(out.headers ?? {}), ...(out.page.headers ?? {}) } });
      const res = seeOther(`/account?done=${out.done}#${part}`);
      for (const [k, v] of Object.entries(out.headers ?? {})) res.headers.append(k, v);
      return res;
    } catch (e) {
      const err: HearthError = asHearthError(e);
      if (!posted || posted.json || !s || err.status === 403) return errorResponse(err, rid());
      return accountPage(rt, req, s, { error: err.message, errorAt: part, status: err.status, headers: err.headers });
    }
  };
}

export const passwordChange = action("password", async (rt, req, s, posted, address) => {
  const ended = await changePassword(rt, s.account, s.hash, { current: posted.get("current"), password: posted.get("password") }, { address, req });
  rt.log.info("password changed", { account: s.account.id, sessions_ended: ended });
  // The device cookie is signed with the password hash: this browser gets one under the new password.
  const device = await deviceCookie(rt, req, s.account);
  return { json: { signed_out: ended }, done: "password", headers: device ? { "set-cookie": device } : undefined };
});

export const sessionEnd = action("sessions", async (rt, _req, s, posted) => {
  const id = posted.get("id") ?? "";
  if (!id) throw invalid("id", "give the id of the session to end (GET /account lists them)");
  if (!(await endSessionById(rt, s.account.id, id))) throw notFound("that browser is signed out already");
  return { json: { signed_out: 1 }, done: "signed-out" };
});

export const sessionsEndOthers = action("sessions", async (rt, _req, s) => {
  const ended = await endOtherSessions(rt, s);
  return { json: { signed_out: ended }, done: "others-out" };
});

export const totpStart = action("two-factor", async (rt, req, s) => {
  const secret = await startTotp(rt, s.account);
  const host = new URL(rt.config.HEARTH_PUBLIC_URL || req.url).host;
  return { json: { secret, uri: totpUri(secret, s.account.username, host) }, done: "setup" };
});

export const totpConfirm = action("two-factor", async (rt, _req, s, posted) => {
  const codes = await confirmTotp(rt, s.account, posted.get("code"));
  rt.log.info("two-factor sign-in on", { account: s.account.id });
  return { json: { on: true, recovery_codes: codes }, page: { notice: "Two-factor sign-in is on. From now on, signing in asks for a code after your password.", codes } };
});

export const totpCancel = action("two-factor", async (rt, _req, s) => {
  await rt.store.write(() => rt.store.wdb.delete(totpSecrets).where(and(eq(totpSecrets.account, s.account.id), isNull(totpSecrets.confirmed))).run());
  return { json: { on: false }, done: "totp-cancelled" };
});

export const totpOff = action("two-factor", async (rt, _req, s, posted) => {
  await disableTotp(rt, s.account, posted.get("proof"));
  rt.log.info("two-factor sign-in off", { account: s.account.id });
  return { json: { on: false }, done: "totp-off" };
});

export const totpRecovery = action("two-factor", async (rt, _req, s, posted) => {
  const codes = await renewRecoveryCodes(rt, s.account, posted.get("proof"));
  return { json: { recovery_codes: codes }, page: { notice: "New recovery codes are made; the old ones no longer work.", codes } };
});

export const passkeyOptions = action("passkeys", async (rt, req, s) => {
  return { json: await registrationOptions(rt, req, s.account) };
});

export const passkeyAdd = action("passkeys", async (rt, req, s, posted) => {
  const made = await finishRegistration(rt, req, s.account, { handle: posted.value("handle"), name: posted.value("name"), response: posted.value("response") });
  rt.log.info("passkey added", { account: s.account.id });
  return { json: { id: made.id, name: made.name }, done: "passkey-added" };
});

export const passkeyRename = action("passkeys", async (rt, _req, s, posted) => {
  await renamePasskey(rt, s.account.id, posted.get("id"), posted.get("name"));
  return { json: { renamed: posted.get("id") }, done: "passkey-renamed" };
});

export const passkeyRemove = action("passkeys", async (rt, _req, s, posted) => {
  await removePasskey(rt, s.account.id, posted.get("id"));
  rt.log.info("passkey removed", { account: s.account.id });
  return { json: { removed: posted.get("id") }, done: "passkey-removed" };
});

