// The floor: the least a JSON endpoint can cost on this machine with Bun.serve.
const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: "127.0.0.1",
  fetch: () => Response.json({ result: { title: "floor", text: "the least a JSON answer costs" } }),
});
console.log(server.port);
