// The MCP SDKs' clients wait as long as the runner lets a test take. Each SDK
// gives up on a request after 60 s unless the call names its own limit, and a
// loaded machine may need longer to start a stdio server or answer; the tests
// are about the answer, not the machine's speed. Imported for its effect by
// every test file that drives an SDK client, so no call can forget it.
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";

/** The runner's own limit per test (test/run.ts). */
export const PATIENCE_MS = 600_000;

type Timed = { _setupTimeout: (id: number, timeout: number, maxTotal: number | undefined, ...rest: unknown[]) => unknown };

for (const C of [ClientV1, ClientV2]) {
  let proto: object | null = C.prototype;
  while (proto && !Object.hasOwn(proto, "_setupTimeout")) proto = Object.getPrototypeOf(proto);
  if (!proto) throw new Error("the MCP SDK no longer has _setupTimeout: find where it sets a request's limit");
  const p = proto as Timed & { patient?: true };
  if (p.patient) continue;
  const setup = p._setupTimeout;
  p._setupTimeout = function (this: unknown, id, timeout, maxTotal, ...rest) {
    return setup.call(this, id, Math.max(timeout, PATIENCE_MS), maxTotal === undefined ? undefined : Math.max(maxTotal, PATIENCE_MS), ...rest);
  };
  p.patient = true;
}
