// one store: the Host and Origin names an instance answers; nothing in it depends on the store
// DNS rebinding: a page on a name the attacker controls points that name at
// the instance and calls it as its own origin. Such requests carry the
// attacker's name in Host (and a matching Origin), and are refused wherever
// the instance knows which names are its own.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHearth, type Hearth } from "../harness.ts";
import { errorShapeProblem } from "./instance.ts";
import { rawRequest } from "./raw.ts";

const EVIL = "evil.example.com";
const init = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });

function calls(token: string, host: string) {
  const common = { host, origin: `http://${host.toLowerCase()}`, authorization: `Bearer ${token}` };
  return [
    { method: "GET", path: "/api/v1/notes/list", headers: common },
    { method: "POST", path: "/api/v1/notes/add", headers: { ...common, "content-type": "application/json" }, body: JSON.stringify({ title: `from ${host}`, text: "x" }) },
    { method: "POST", path: "/mcp", headers: { ...common, "content-type": "application/json", accept: "application/json, text/event-stream" }, body: init },
    { method: "GET", path: "/token", headers: common },
    { method: "GET", path: "/health", headers: common },
  ];
}

describe("listening on loopback", () => {
  let h: Hearth;
  let token: string;
  let port: number;
  beforeAll(async () => {
    h = await startHearth({ env: { HEARTH_METERING: "off" } });
    token = await h.token("alice");
    port = Number(new URL(h.url).port);
  });
  afterAll(() => h?.stop());

  test("another name in Host, with a matching Origin, is refused with 403 on the API, /mcp and pages; nothing is written", async () => {
    for (const host of [EVIL, `${EVIL}:${port}`, `${EVIL}.`, "attacker.localtest.me"]) {
      for (const c of calls(token, host)) {
        const r = await rawRequest(port, c);
        expect(r.status, `${c.method} ${c.path} as ${host}`).toBe(403);
        const body = JSON.parse(r.text);
        expect(errorShapeProblem(403, body)).toBeNull();
        expect(body.error.message).toContain("HEARTH_ALLOWED_HOSTS");
      }
    }
    const listed = await h.call("notes/list", {}, { token });
    expect(listed.body.result.notes ?? listed.body.result).toEqual([]);
  });

  test("localhost, 127.0.0.1 and [::1] with any port are answered", async () => {
    for (const host of ["localhost", `localhost:${port}`, `127.0.0.1:${port}`, "[::1]:9999", "LOCALHOST:1"]) {
      for (const c of calls(token, host).filter((c) => c.path !== "/token")) {
        const r = await rawRequest(port, c);
        expect(r.status, `${c.method} ${c.path} as ${host}: ${r.text.slice(0, 200)}`).toBe(200);
      }
    }
  });
});

describe("listening on every interface", () => {
  test("without a public URL any name is answered; with one, only its name, IP addresses, localhost and HEARTH_ALLOWED_HOSTS", async () => {
    const { listen } = await import("../../core/http/serve.ts");
    const envs: Record<string, string>[] = [{}, { HEARTH_PUBLIC_URL: "https://hearth.example.org" }, { HEARTH_PUBLIC_URL: "https://hearth.example.org", HEARTH_ALLOWED_HOSTS: "hearth, other.example.net" }];
    for (const env of envs) {
      const h = await startHearth({ env });
      const open = listen(h.rt, { port: 0, hostname: "0.0.0.0" });
      try {
        const port = open.server.port!;
        const status = async (host: string) => (await rawRequest(port, { method: "GET", path: "/health", headers: { host } })).status;
        const pub = "HEARTH_PUBLIC_URL" in env;
        const listed = "HEARTH_ALLOWED_HOSTS" in env;
        expect(await status(EVIL)).toBe(pub ? 403 : 200);
        expect(await status("hearth.example.org")).toBe(200);
        expect(await status("HEARTH.example.org:443")).toBe(200);
        expect(await status("192.168.1.20:8080")).toBe(200);
        expect(await status("localhost:8080")).toBe(200);
        expect(await status("hearth:8080")).toBe(pub && !listed ? 403 : 200);
        expect(await status("other.example.net")).toBe(pub && !listed ? 403 : 200);
      } finally {
        await open.stop();
        await h.stop();
      }
    }
  });
});
