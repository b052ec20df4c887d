// Identity: the token and session identifiers for every surface that
// identifies requests, the sign-in, sign-up and /token pages, and the
// password and invite commands.
import { clientAddress, route, type App } from "../http/app.ts";
import { basic, bearer } from "../http/identify.ts";
import { signinPage, signinPost, signoutPost, signupPage, signupPost, sessionInfo } from "../http/pages/signin.ts";
import { passwordPage, passwordPost } from "../http/pages/password.ts";
import * as account from "../http/pages/account.ts";
import { passkeyScript } from "../http/pages/passkeyscript.ts";
import { codePage, codePost, passkeyOptionsPost, passkeySigninPost } from "../http/pages/signinsteps.ts";
import { inviteCreate, tokenCreate, tokenGet, tokenRevoke } from "../http/pages/token.ts";
import { defineModule } from "../module.ts";
import { inviteCommand, passwordCommand } from "./cli.ts";
import type { Runtime } from "../runtime.ts";
import { identifySession } from "./sessions.ts";

function mountPages(app: App, rt: Runtime) {
  const noParse = { parse: "none" as const };
  app.get("/signin", route((c) => signinPage(rt, c.request)));
  app.post("/signin", route((c) => signinPost(rt, c.request, clientAddress(c))), noParse);
  app.get("/signin/code", route((c) => codePage(rt, c.request)));
  app.post("/signin/code", route((c) => codePost(rt, c.request, clientAddress(c))), noParse);
  app.post("/signin/passkey/options", route((c) => passkeyOptionsPost(rt, c.request, clientAddress(c))), noParse);
  app.post("/signin/passkey", route((c) => passkeySigninPost(rt, c.request, clientAddress(c))), noParse);
  app.get("/passkeys.js", route(() => passkeyScript()));
  app.get("/signup", route((c) => signupPage(rt, c.request)));
  app.post("/signup", route((c) => signupPost(rt, c.request, clientAddress(c))), noParse);
  app.get("/password", route((c) => passwordPage(rt, c.request)));
  app.post("/password", route((c) => passwordPost(rt, c.request, clientAddress(c))), noParse);
  app.post("/signout", route((c) => signoutPost(rt, c.request, false)), noParse);
  app.post("/signout/all", route((c) => signoutPost(rt, c.request, true)), noParse);
  app.get("/session", route((c) => sessionInfo(rt, c.request)));
  app.get("/token", route((c) => tokenGet(rt, c.request)));
  app.post("/token", route((c) => tokenCreate(rt, c.request)), noParse);
  app.post("/token/revoke", route((c) => tokenRevoke(rt, c.request)), noParse);
  app.post("/invites", route((c) => inviteCreate(rt, c.request)), noParse);
  app.get("/account", route((c) => account.accountGet(rt, c.request)));
  const posts: [string, (rt: Runtime, req: Request, address: string) => Promise<Response>][] = [
    ["/account/password", account.passwordChange],
    ["/account/sessions/end", account.sessionEnd],
    ["/account/sessions/end-others", account.sessionsEndOthers],
    ["/account/totp/start", account.totpStart],
    ["/account/totp/confirm", account.totpConfirm],
    ["/account/totp/cancel", account.totpCancel],
    ["/account/totp/off", account.totpOff],
    ["/account/totp/recovery", account.totpRecovery],
    ["/account/passkeys/options", account.passkeyOptions],
    ["/account/passkeys", account.passkeyAdd],
    ["/account/passkeys/rename", account.passkeyRename],
    ["/account/passkeys/remove", account.passkeyRemove],
  ];
  for (const [path, run] of posts) app.post(path, route((c) => run(rt, c.request, clientAddress(c))), noParse);
}

export const authModule = defineModule({
  name: "auth",
  provides: {
    // The session comes after the token identifiers: a request carrying a token never rests on the cookie.
    identifiers: [bearer, basic, (rt, req) => identifySession(rt, req)],
    mounts: [mountPages],
    cli: { password: passwordCommand, invite: inviteCommand },
  },
});
