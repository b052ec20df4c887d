// The floor: the least a JSON endpoint can cost on this machine with Bun.serve.
// GET answers a small JSON object. POST is the least an MCP tools/call can
// cost over HTTP: it reads a JSON-RPC body and answers with a JSON-RPC result
// carrying the value twice (as text and as structured content), as tools/call does.
const value = { title: "floor", text: "the least a JSON answer costs", created: "2026-01-01T00:00:00.000Z", updated: "2026-01-01T00:00:00.000Z" };
const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: "127.0.0.1",
  fetch(req) {
    if (req.method !== "POST") return Response.json({ result: value });
    return req.text().then((body) => {
      const rpc = JSON.parse(body) as { id: unknown };
      return Response.json({ jsonrpc: "2.0", id: rpc.id, result: { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value, resultType: "complete" } });
    });
  },
});
console.log(server.port);
