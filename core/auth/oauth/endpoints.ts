// What an MCP client reads and calls to sign in: protected resource metadata
// (RFC 9728), authorization server metadata (RFC 8414), dynamic client
// registration (RFC 7591) and the token endpoint (RFC 6749 with PKCE and
// RFC 8707 resource indicators). Errors are RFC 6749's JSON bodies.
import { asHearthError } from "../../errors.ts";
import { CORS_HEADERS } from "../../http/cors.ts";
import { readPosted, type Posted } from "../../http/pages/form.ts";
import type { Runtime } from "../../runtime.ts";
import { audienceFor, exchangeCode, instanceBase, OAuthError, refreshGrant, registerClient } from "./grants.ts";

export const AUTHORIZE_PATH = "/oauth/authorize";
export const TOKEN_PATH = "/oauth/token";
export const REGISTER_PATH = "/oauth/register";
export const RESOURCE_METADATA = "/.well-known/oauth-protected-resource";

function oauthJson(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff", ...CORS_HEADERS, ...headers },
  });
}

/** An RFC 6749 error body; anything that is not an OAuthError is told as what it is (a 413, a 429), never as a stack. */
export function oauthRefusal(rt: Runtime, e: unknown): Response {
  if (e instanceof OAuthError) return oauthJson(e.status, { error: e.error, error_description: e.description });
  const err = asHearthError(e);
  if (err.status >= 500) rt.log.error("oauth endpoint failed", { error: String((e as Error)?.stack ?? e) });
  const code = err.status === 429 ? "temporarily_unavailable" : err.status >= 500 ? "server_error" : "invalid_request";
  return oauthJson(err.status, { error: code, error_description: err.message }, err.headers ?? {});
}

/** RFC 9728: this instance's resources (/mcp, the API) and the authorization server that issues tokens for them (itself). */
export function resourceMetadata(rt: Runtime, req: Request, path: "" | "/mcp"): Response {
  const base = instanceBase(rt, req);
  return oauthJson(
    200,
    {
      resource: base + path,
      authorization_servers: [base],
      scopes_supported: rt.registry.services(),
      bearer_methods_supported: ["header"],
      resource_name: "Hearth",
      resource_documentation: `${base}/mcp`,
    },
    { "cache-control": "public, max-age=300" },
  );
}

/** RFC 8414: an authorization code server for public clients with PKCE S256 only. */
export function serverMetadata(rt: Runtime, req: Request): Response {
  const base = instanceBase(rt, req);
  return oauthJson(
    200,
    {
      issuer: base,
      authorization_endpoint: base + AUTHORIZE_PATH,
      token_endpoint: base + TOKEN_PATH,
      registration_endpoint: base + REGISTER_PATH,
      scopes_supported: rt.registry.services(),
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      token_endpoint_auth_methods_supported: ["none"],
      code_challenge_methods_supported: ["S256"],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    },
    { "cache-control": "public, max-age=300" },
  );
}

async function posted(rt: Runtime, req: Request): Promise<Posted> {
  try {
    return await readPosted(rt, req);
  } catch (e) {
    const err = asHearthError(e);
    if (err.status === 413) throw err;
    throw new OAuthError("invalid_request", err.message);
  }
}

export async function registerEndpoint(rt: Runtime, req: Request): Promise<Response> {
  try {
    if (!(req.headers.get("content-type") ?? "").toLowerCase().includes("application/json"))
      throw new OAuthError("invalid_client_metadata", "send the client metadata as a JSON object (Content-Type: application/json)");
    const body = await posted(rt, req);
    const fields = ["redirect_uris", "client_name", "grant_types", "response_types"] as const;
    const metadata: Record<string, unknown> = {};
    for (const f of fields) metadata[f] = body.value(f);
    return oauthJson(201, await registerClient(rt, metadata));
  } catch (e) {
    return oauthRefusal(rt, e);
  }
}

/** The client_id of a token request: in the body, or as the user name of HTTP Basic for clients that send it so. */
function clientIdOf(req: Request, body: Posted): string {
  const basic = /^Basic\s+(\S+)$/i.exec(req.headers.get("authorization") ?? "");
  let fromHeader: string | undefined;
  if (basic) {
    const decoded = Buffer.from(basic[1], "base64").toString("utf8");
    const user = decoded.includes(":") ? decoded.slice(0, decoded.indexOf(":")) : decoded;
    try {
      fromHeader = decodeURIComponent(user);
    } catch {
      throw new OAuthError("invalid_request", "the client_id in the Authorization header is not valid form encoding");
    }
  }
  const fromBody = body.get("client_id");
  if (fromHeader && fromBody && fromHeader !== fromBody) throw new OAuthError("invalid_request", "client_id differs between the body and the Authorization header");
  const id = fromBody ?? fromHeader;
  if (!id) throw new OAuthError("invalid_request", "client_id is missing");
  return id;
}

export async function tokenEndpoint(rt: Runtime, req: Request): Promise<Response> {
  try {
    const body = await posted(rt, req);
    const grantType = body.get("grant_type");
    const clientId = clientIdOf(req, body);
    const audience = audienceFor(rt, req, body.get("resource"));
    if (grantType === "authorization_code")
      return oauthJson(200, await exchangeCode(rt, { code: body.get("code"), clientId, redirectUri: body.get("redirect_uri"), verifier: body.get("code_verifier"), audience }));
    if (grantType === "refresh_token")
      return oauthJson(200, await refreshGrant(rt, { refreshToken: body.get("refresh_token"), clientId, audience, scope: body.get("scope") }));
    if (!grantType) throw new OAuthError("invalid_request", "grant_type is missing");
    throw new OAuthError("unsupported_grant_type", `grant_type "${grantType}" is not supported here (authorization_code, refresh_token)`);
  } catch (e) {
    return oauthRefusal(rt, e);
  }
}
