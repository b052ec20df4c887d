// /people: the admin's list of the instance's accounts, with what can be
// done to each: invite someone, disable or enable, a one-time link to set a
// password, credits and whether priced calls cost them, and deletion (with
// the account's export offered first, once the instance can make one).
import { createInvite, INVITE_DAYS, PASSWORD_LINK_HOURS, passwordLinkPath, createPasswordLink, signupPolicy } from "../auth/people.ts";
import type { Session } from "../auth/sessions.ts";
import { asHearthError, invalid } from "../errors.ts";
import { jsonResponse } from "../http/respond.ts";
import { html, message, page, type Html } from "../http/pages/layout.ts";
import { accountMetering, chooseMetering, metersAccount, parseChoice } from "../pay/accounts.ts";
import { grantCredits } from "../pay/grant.ts";
import { balanceOf } from "../pay/ledger.ts";
import { payAccounts } from "../pay/schema.ts";
import type { Runtime } from "../runtime.ts";
import { eq } from "drizzle-orm";
import { adminPost, adminSession, refusal, rid } from "./admin.ts";
import { listPasskeys } from "../auth/passkeys.ts";
import { totpOn } from "../auth/totp.ts";
import { accountExportLink, checkOwnPassword, deletePerson, disablePerson, enablePerson, findPerson, listPeople, resetTwoFactor, type Person } from "./people.ts";

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface View {
  notice?: string;
  error?: string;
  /** A link made just now, shown once: an invitation or a password link. */
  link?: { what: string; url: string; expires: string };
  status?: number;
}

async function row(rt: Runtime, s: Session, p: Person): Promise<Html> {
  const balance = await balanceOf(rt.store.rdb, p.id);
  const metered = await metersAccount(rt.store.rdb, accountMetering(rt.config), p);
  const chosen = await rt.store.rdb.select({ metered: payAccounts.metered }).from(payAccounts).where(eq(payAccounts.account, p.id)).get();
  const self = p.id === s.account.id;
  const id = `p-${p.username}`;
  const hidden = (action: string) => html`<input type="hidden" name="csrf" value="${s.csrf}"><input type="hidden" name="user" value="${p.username}"><input type="hidden" name="action" value="${action}">`;
  const exportUrl = accountExportLink?.(rt, p) ?? null;
  const [twoFactor, keys] = await Promise.all([totpOn(rt, p.id), listPasskeys(rt, p.id)]);
  const tags = [p.admin ? "admin" : null, p.disabled ? "disabled" : null, p.hasPassword ? null : "no password yet", twoFactor ? "two-factor" : null, keys.length ? `${keys.length} passkey${keys.length === 1 ? "" : "s"}` : null, self ? "you" : null].filter(Boolean) as string[];
  return html`<section class="person" aria-labelledby="${id}">
<h3 id="${id}">${p.username}${tags.map((t) => html` <span class="tag">${t}</span>`)}</h3>
<p class="hint">Joined ${day(p.created)} · ${balance} credit${balance === 1 ? "" : "s"} · priced calls ${metered ? "cost credits" : "free"}${chosen ? " (chosen for this account)" : ""}</p>
<div class="acts">
${
  self
    ? ""
    : html`<form method="post" action="/people">${hidden(p.disabled ? "enable" : "disable")}<button class="quiet" type="submit">${p.disabled ? `Enable ${p.username}` : `Disable ${p.username}`}</button></form>`
}
<form method="post" action="/people">${hidden("reset")}<button class="quiet" type="submit">Password link for ${p.username}</button></form>
</div>
<div class="acts">
<form method="post" action="/people" class="inline">${hidden("grant")}
<label for="${id}-amount">Credits to grant ${p.username}</label>
<span class="row"><input type="text" inputmode="numeric" id="${id}-amount" name="amount" size="6" aria-describedby="${id}-amount-hint"><button class="quiet" type="submit">Grant</button></span>
<span id="${id}-amount-hint" class="hint">A negative number takes credits back.</span></form>
<form method="post" action="/people" class="inline">${hidden("meter")}
<label for="${id}-meter">Priced calls of ${p.username}</label>
<span class="row"><select id="${id}-meter" name="metered"><option value="default"${chosen ? "" : html` selected`}>As the instance's setting</option><option value="on"${chosen?.metered === true ? html` selected` : ""}>Cost credits</option><option value="off"${chosen?.metered === false ? html` selected` : ""}>Free</option></select><button class="quiet" type="submit">Save</button></span></form>
</div>
${twoFactor || keys.length ? resetPart(s, p, self, twoFactor, keys.length, id, hidden) : ""}
${
  self
    ? ""
    : html`<details><summary>Delete ${p.username}…</summary>
<p>Deleting removes the account, its sign-ins, tokens and everything it keeps here; the credits ledger keeps its entries. It cannot be undone.</p>
${exportUrl ? html`<p><a href="${exportUrl}">Download ${p.username}'s data first</a></p>` : html`<p class="hint">Ask ${p.username} to copy out what they want to keep first.</p>`}
<form method="post" action="/people">${hidden("delete")}
<label for="${id}-confirm">Type ${p.username} to confirm</label>
<input type="text" id="${id}-confirm" name="confirm" autocomplete="off" spellcheck="false">
<p><button type="submit" class="danger">Delete ${p.username}</button></p></form></details>`
}
</section>`;
}

/** For a person who lost their phone and recovery codes: their second factors off, so their password alone signs them in. */
function resetPart(s: Session, p: Person, self: boolean, twoFactor: boolean, keys: number, id: string, hidden: (action: string) => Html): Html {
  const what = [twoFactor ? "turns off two-factor sign-in" : null, keys ? `removes ${self ? "your" : "their"} ${keys === 1 ? "passkey" : `${keys} passkeys`}` : null].filter(Boolean).join(" and ");
  return html`<details class="reset"><summary>${self ? "Turn off your own two-factor sign-in…" : `Lost phone: turn off ${p.username}'s two-factor sign-in…`}</summary>
<p>This ${what}, so ${self ? "your password alone signs you in" : `${p.username}'s password alone signs them in`}. ${
    self ? "Your other browser sessions end." : html`${p.username} is signed out of every browser and told what happened the next time they sign in; they can set up an app or a passkey again on their account page.`
  } It is written to the activity log.</p>
<form method="post" action="/people">${hidden("reset2fa")}
${self ? html`<label for="${id}-password">Your password</label><input type="password" id="${id}-password" name="password" autocomplete="current-password" required>` : ""}
<p><button type="submit" class="danger">${self ? "Turn off my two-factor sign-in" : `Turn off ${p.username}'s two-factor sign-in`}</button></p></form></details>`;
}

export async function peoplePage(rt: Runtime, s: Session, v: View = {}): Promise<Response> {
  const people = await listPeople(rt);
  const policy = signupPolicy(rt.config);
  const link = v.link
    ? html`<section class="made" aria-label="${v.link.what}"><p>${v.link.what} (works once, until ${v.link.expires.slice(0, 16).replace("T", " ")} UTC): copy it now, it is not shown again.</p><code class="secret" id="made-link">${v.link.url}</code></section>`
    : "";
  const body = html`${message("notice", v.notice)}${message("alert", v.error)}${link}
<p>Sign-up here is <strong>${policy}</strong>${policy === "invite" ? ": a person needs an invitation" : policy === "open" ? ": anyone who can reach the instance may make an account" : ": only the command line makes accounts"}. <a href="/settings#g-sign-up-and-sign-in">Change it in the settings</a>.</p>
<form method="post" action="/people"><input type="hidden" name="csrf" value="${s.csrf}"><input type="hidden" name="action" value="invite"><button type="submit">Invite someone</button> <span class="hint">An invitation link works once, for ${INVITE_DAYS} days.</span></form>
<h2>Accounts (${people.length})</h2>
${await Promise.all(people.map((p) => row(rt, s, p)))}`;
  return page({ title: "People", body, account: s.account, csrf: s.csrf, status: v.status, head: STYLE, path: "/people" });
}

const STYLE = html`<style>
.person{border-top:1px solid var(--line);padding:.5rem 0 1rem}.person h3{margin:.5rem 0 0;font-size:1.1rem}
.tag{font-weight:400;font-size:.85rem;color:var(--muted);border:1px solid var(--line);border-radius:1rem;padding:0 .5rem}
.acts{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:flex-end;margin:.5rem 0}.acts form{margin:0}
.inline label{margin-top:.25rem}.row{display:flex;gap:.5rem;align-items:center}.row input,.row select{width:auto;max-width:16rem}
details summary{cursor:pointer;color:var(--bad);font-weight:600;padding:.4rem 0}details.reset summary{color:var(--fg)}
button.danger{background:var(--bad);border-color:var(--bad)}
</style>`;

export async function peopleGet(rt: Runtime, req: Request): Promise<Response> {
  const s = await adminSession(rt, req);
  if (s instanceof Response) return s;
  if (!(req.headers.get("accept") ?? "").includes("text/html"))
    return jsonResponse(200, { result: (await listPeople(rt)).map((p) => ({ ...p, created: new Date(p.created).toISOString() })) }, rid(), { "cache-control": "no-store" });
  return peoplePage(rt, s);
}

export async function peoplePost(rt: Runtime, req: Request): Promise<Response> {
  const got = await adminPost(rt, req);
  if (got instanceof Response) return got;
  const { s, posted } = got;
  const base = (rt.config.HEARTH_PUBLIC_URL || new URL(req.url).origin).replace(/\/+$/, "");
  const answer = (result: Record<string, unknown>, v: View) => (posted.json ? jsonResponse(200, { result }, rid(), { "cache-control": "no-store" }) : peoplePage(rt, s, v));
  try {
    const action = posted.get("action");
    if (action === "invite") {
      const inv = await createInvite(rt, s.account);
      const url = `${base}/signup?invite=${inv.code}`;
      rt.log.info("invitation made", { account: s.account.id });
      return answer({ url, code: inv.code, expires: inv.expires }, { link: { what: "Invitation link", url, expires: inv.expires } });
    }
    const p = await findPerson(rt, posted.get("user"));
    const now = rt.clock.now().getTime();
    switch (action) {
      case "disable":
        await disablePerson(rt, s.account, p);
        rt.log.info("account disabled", { account: s.account.id, target: p.id });
        return answer({ user: p.username, disabled: true }, { notice: `${p.username} is disabled: signed out everywhere, tokens revoked, and sign-in refused until enabled.` });
      case "enable":
        await enablePerson(rt, p);
        rt.log.info("account enabled", { account: s.account.id, target: p.id });
        return answer({ user: p.username, disabled: false }, { notice: `${p.username} may sign in again (tokens revoked when disabled stay revoked).` });
      case "reset": {
        const link = await createPasswordLink(rt, p);
        const url = base + passwordLinkPath(link.code);
        rt.log.info("password link made", { account: s.account.id, target: p.id });
        return answer({ user: p.username, url, expires: link.expires }, { link: { what: `Link for ${p.username} to set a password (valid ${PASSWORD_LINK_HOURS} hours; earlier links stop working)`, url, expires: link.expires } });
      }
      case "reset2fa": {
        const self = p.id === s.account.id;
        if (self) await checkOwnPassword(rt, s.account.id, posted.get("password"));
        const done = await resetTwoFactor(rt, p, { by: s.account, keep: self ? s.hash : undefined });
        rt.log.info("two-factor sign-in reset", { account: s.account.id, target: p.id });
        const removed = [done.totp ? "two-factor sign-in is off" : null, done.passkeys ? `${done.passkeys} passkey${done.passkeys === 1 ? "" : "s"} removed` : null].filter(Boolean).join(", ");
        return answer(
          { user: p.username, two_factor: false, passkeys_removed: done.passkeys, sessions_ended: done.sessions },
          { notice: self ? `Your ${removed}; your other sessions ended (${done.sessions}).` : `${p.username}: ${removed}; signed out of ${done.sessions} browser session${done.sessions === 1 ? "" : "s"}. Their password alone signs them in, and they are told so when they next sign in.` },
        );
      }
      case "grant": {
        const raw = (posted.get("amount") ?? "").trim();
        if (!/^-?\d{1,9}$/.test(raw) || Number(raw) === 0) throw invalid("amount", `give a whole number of credits other than 0 (got "${raw}")`);
        const out = await rt.store.write(() => grantCredits(rt.store.wdb, { username: p.username, amount: Number(raw), note: posted.get("note") || undefined, by: s.account.username, at: now }));
        return answer(out as Record<string, unknown>, { notice: `${Number(raw) > 0 ? "Granted" : "Took back"} ${Math.abs(Number(raw))} credits ${Number(raw) > 0 ? "to" : "from"} ${p.username}.` });
      }
      case "meter": {
        const choice = parseChoice(posted.get("metered"));
        if (choice === undefined) throw invalid("metered", `say on, off or default (got "${posted.get("metered") ?? ""}")`);
        const out = await rt.store.write(() => chooseMetering(rt.store.wdb, { username: p.username, metered: choice, by: s.account.username, at: now }, accountMetering(rt.config)));
        return answer(out, { notice: `${p.username}'s priced calls ${out.metered ? "cost credits" : "are free"}.` });
      }
      case "delete": {
        if ((posted.get("confirm") ?? "").trim().toLowerCase() !== p.username) throw invalid("confirm", `type the username ${p.username} to confirm the deletion`);
        await deletePerson(rt, s.account, p);
        rt.log.info("account deleted", { account: s.account.id, target: p.id });
        return answer({ deleted: p.username }, { notice: `${p.username} is deleted.` });
      }
      default:
        throw invalid("action", `say what to do: invite, disable, enable, reset, reset2fa, grant, meter or delete (got "${action ?? ""}")`);
    }
  } catch (e) {
    const err = asHearthError(e);
    if (posted.json || err.status === 401) return refusal(err, posted.json, s, "/people");
    return peoplePage(rt, s, { error: err.field ? `${err.field}: ${err.message}` : err.message, status: err.status });
  }
}
