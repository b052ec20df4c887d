// MCP authorization: the instance is the protected resource (/mcp and the
// API) and its own authorization server. Access tokens it issues are bearer
// tokens like any other, bound to this instance as their audience.
import { clientAddress, route, type App } from "../../http/app.ts";
import { preflight } from "../../http/cors.ts";
import type { ChallengeParams, TokenCheck } from "../../http/identify.ts";
import { authorizeGet, authorizePost } from "../../http/pages/consent.ts";
import { grantsGet } from "../../http/pages/token.ts";
import { unauthenticated } from "../../errors.ts";
import { limitAttempt } from "../people.ts";
import { AUTHORIZE_PATH, oauthRefusal, REGISTER_PATH, registerEndpoint, RESOURCE_METADATA, resourceMetadata, serverMetadata, TOKEN_PATH, tokenEndpoint } from "./endpoints.ts";
import { instanceBase, tokenAudience } from "./grants.ts";
import { oauthMigrations } from "./migrations.ts";
import { defineModule } from "../../module.ts";
import type { Runtime } from "../../runtime.ts";

// Every 401 names where a client learns how to get a token: for /mcp its own metadata, else the instance's.
const resourceMetadataParam: ChallengeParams = (rt, req) => {
  const mcp = new URL(req.url).pathname.startsWith("/mcp");
  return { resource_metadata: `${instanceBase(rt, req)}${RESOURCE_METADATA}${mcp ? "/mcp" : ""}` };
};

// A token issued for another audience (this instance under another address) is refused here.
const audienceCheck: TokenCheck = (rt, req, caller) => {
  const audience = caller.tokenId ? tokenAudience(rt, caller.tokenId) : null;
  if (audience === null) return;
  const check = (audience: string | null) => {
    if (audience === null) return;
    const base = instanceBase(rt, req);
    if (audience !== base) throw unauthenticated(`the token was issued for ${audience}, not for ${base}`);
  };
  return audience instanceof Promise ? audience.then(check) : check(audience);
};

function mountOauth(app: App, rt: Runtime) {
  const noParse = { parse: "none" as const };
  const cors = () => preflight("GET, POST");
  app.get(RESOURCE_METADATA, route((c) => resourceMetadata(rt, c.request, "")));
  app.get(`${RESOURCE_METADATA}/mcp`, route((c) => resourceMetadata(rt, c.request, "/mcp")));
  app.get("/.well-known/oauth-authorization-server", route((c) => serverMetadata(rt, c.request)));
  for (const p of [RESOURCE_METADATA, `${RESOURCE_METADATA}/mcp`, "/.well-known/oauth-authorization-server", TOKEN_PATH, REGISTER_PATH]) app.options(p, cors);
  app.post(
    REGISTER_PATH,
    route(async (c) => {
      // Registration is open to anyone: it shares the sign-in attempt budget of the address.
      try {
        await limitAttempt(rt, clientAddress(c));
      } catch (e) {
        return oauthRefusal(rt, e);
      }
      return registerEndpoint(rt, c.request);
    }),
    noParse,
  );
  app.post(TOKEN_PATH, route((c) => tokenEndpoint(rt, c.request)), noParse);
  app.get(AUTHORIZE_PATH, route((c) => authorizeGet(rt, c.request)));
  app.post(AUTHORIZE_PATH, route((c) => authorizePost(rt, c.request)), noParse);
  app.get("/token/grants", route((c) => grantsGet(rt, c.request)));
}

export const oauthModule = defineModule({
  name: "oauth",
  requires: ["auth"],
  provides: {
    migrations: { oauth: oauthMigrations },
    challengeParams: [resourceMetadataParam],
    tokenChecks: [audienceCheck],
    mounts: [mountOauth],
  },
});
