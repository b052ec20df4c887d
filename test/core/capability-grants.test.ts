// one store: which drop-in is given which capability, decided as plugins load; drop-ins' own tables run on both stores in test/core/plugins.test.ts
// What only one built-in needs of the instance is a named capability that
// plugin declares in needs, never an import: agentHost (the core's, for the
// agent), conversations (recall's, for the agent) and walletSign (the
// wallet's, for credits). A drop-in that does not declare one is refused it,
// with 501 naming the plugin and the capability; one that declares it is
// given it, whoever provides it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHearth, type Hearth } from "../harness.ts";

const CAPS = ["agentHost", "conversations", "walletSign"];
const parent = mkdtempSync(join(tmpdir(), "hearth-grants-"));

/** A drop-in whose method reports what ctx holds under a capability's name, declaring `needs`. */
function plugin(name: string, needs: string[]) {
  mkdirSync(join(parent, name));
  writeFileSync(
    join(parent, name, "index.ts"),
    `import { definePlugin, read, T } from "hearth";
export default definePlugin({
  name: ${JSON.stringify(name)},
  description: "Reports the capabilities it is given.",
  needs: ${JSON.stringify(needs)},
  methods: {
    has: read({
      description: "What ctx holds under a capability's name.",
      args: T.Object({ cap: T.String() }),
      access: "account",
      run: ({ cap }, ctx) => ({ type: typeof (ctx as unknown as Record<string, unknown>)[cap] }),
    }),
  },
});
`,
  );
}
plugin("undeclared", ["db"]);
plugin("declared", CAPS);

let h: Hearth;
const errors: Record<string, unknown>[] = [];
beforeAll(async () => {
  const logger = { info: () => {}, warn: () => {}, error: (msg: string, data?: Record<string, unknown>) => void errors.push({ msg, ...data }), line: () => {} };
  h = await startHearth({ env: { HEARTH_PLUGINS: parent }, logger });
});
afterAll(async () => {
  await h?.stop();
  rmSync(parent, { recursive: true, force: true });
});

test("a plugin that does not declare agentHost, conversations or walletSign is refused each, naming it", async () => {
  const token = await h.token("alice");
  for (const cap of CAPS) {
    const r = await h.call("undeclared/has", { cap }, { token });
    expect(r.status).toBe(501);
    expect(r.body.error).toMatchObject({ kind: "not_configured", message: `plugin "undeclared" uses ctx.${cap} without declaring "${cap}" in needs: add it to the plugin's needs` });
    expect(errors).toContainEqual(expect.objectContaining({ plugin: "undeclared", capability: cap }));
  }
});

test("a plugin that declares them is given each", async () => {
  const token = await h.token("alice");
  const given = Object.fromEntries(await Promise.all(CAPS.map(async (cap) => [cap, (await h.call("declared/has", { cap }, { token })).body.result.type])));
  expect(given).toEqual({ agentHost: "object", conversations: "object", walletSign: "function" });
});

test("the built-ins that use them declare them", () => {
  const needs = (service: string) => h.rt.registry.plugins.get(service)!.def.needs ?? [];
  expect(needs("agent")).toEqual(expect.arrayContaining(["agentHost", "conversations"]));
  expect(needs("credits")).toContain("walletSign");
  for (const service of h.rt.registry.services()) {
    if (["agent", "declared"].includes(service)) continue;
    expect({ service, agentHost: needs(service).includes("agentHost"), conversations: needs(service).includes("conversations") }).toEqual({ service, agentHost: false, conversations: false });
  }
});
