// The floor: the least a JSON endpoint can cost on this machine with Bun.serve.
// GET answers a small JSON object. POST is the least an MCP tools/call can
// cost over HTTP: it reads a JSON-RPC body and answers with a JSON-RPC result
// carrying the value twice (as text and as structured content), as tools/call does.
//
// Two more routes, on Bun's router as Hearth's are, hold tools/call against
// Hearth's own POST with nothing of Hearth between: /api/v1/notes/get reads
// what POST notes/get reads and answers its body and headers, /mcp reads what
// /mcp reads and answers tools/call's body and headers (the text copy, the
// session's id, 2026-07-28's resultType and stamp). What one costs over the
// other is Bun's cost of the larger request and answer, which no handler can
// take back: bench/mcp.ts runs them beside Hearth's pair.
const value = { title: "floor", text: "the least a JSON answer costs", created: "2026-01-01T00:00:00.000Z", updated: "2026-01-01T00:00:00.000Z" };

const SECURITY = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};
const CORS = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": "PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, Mcp-Session-Id, WWW-Authenticate, Retry-After, X-Request-Id",
};
// The headers Hearth's answers carry: the API's (with a request id each), and /mcp's (with the session's id in one).
const API_HEADERS = new Headers({ "content-type": "application/json; charset=utf-8", ...SECURITY, ...CORS });
const MCP_HEADERS = new Headers({ "content-type": "application/json", ...CORS, ...SECURITY });
const sessionHeaders = new Map<string, Headers>();
const STAMP = JSON.stringify({ "io.modelcontextprotocol/serverInfo": { name: "hearth", title: "Hearth", version: "0.1.0" } });

const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: "127.0.0.1",
  routes: {
    "/api/v1/notes/get": async (req) => {
      const h = req.headers;
      if (!h.get("authorization")) return new Response("no caller", { status: 401 });
      h.get("content-length");
      const args = JSON.parse(await req.text()) as { title?: unknown };
      const headers = new Headers(API_HEADERS);
      headers.set("x-request-id", crypto.randomUUID());
      return new Response(JSON.stringify({ result: { ...value, title: String(args.title) } }), { status: 200, headers });
    },
    "/mcp": async (req) => {
      const h = req.headers;
      if (!h.get("authorization")) return new Response("no caller", { status: 401 });
      const version = h.get("mcp-protocol-version");
      const sid = h.get("mcp-session-id");
      h.get("accept");
      h.get("content-type");
      h.get("content-length");
      const rpc = JSON.parse(await req.text()) as { id: string | number; params: { arguments: { title?: unknown } } };
      const json = JSON.stringify({ result: { ...value, title: String(rpc.params.arguments.title) } });
      const tail = version === "2026-07-28" ? `,"resultType":"complete","_meta":${STAMP}` : "";
      const text = `{"result":{"content":[{"type":"text","text":${JSON.stringify(json)}}],"structuredContent":${json}${tail}},"jsonrpc":"2.0","id":${JSON.stringify(rpc.id)}}`;
      let headers = MCP_HEADERS;
      if (sid !== null && version !== "2026-07-28") {
        let kept = sessionHeaders.get(sid);
        if (!kept) {
          kept = new Headers(MCP_HEADERS);
          kept.set("mcp-session-id", sid);
          sessionHeaders.set(sid, kept);
        }
        headers = kept;
      }
      return new Response(text, { status: 200, headers });
    },
  },
  fetch(req) {
    if (req.method !== "POST") return Response.json({ result: value });
    return req.text().then((body) => {
      const rpc = JSON.parse(body) as { id: unknown };
      return Response.json({ jsonrpc: "2.0", id: rpc.id, result: { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value, resultType: "complete" } });
    });
  },
});
console.log(server.port);
