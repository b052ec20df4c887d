import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { exampleEnv } from "../../core/configdoc.ts";
import { createRuntime } from "../../core/instance.ts";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";

// A scratch folder, never the checkout's own data folder.
const scratch = mkdtempSync(join(tmpdir(), "hearth-config-"));

test("config/example.env documents every setting with its default (run `bun run config:example` after adding one)", async () => {
  const rt = await createRuntime({ env: { HEARTH_DATA: scratch, HEARTH_LOG: "off" } });
  const committed = readFileSync(join(import.meta.dir, "../../config/example.env"), "utf8");
  expect(committed).toBe(exampleEnv(rt.registry));
  await rt.stop();
});

test("environment overrides defaults", async () => {
  const rt = await createRuntime({ env: { HEARTH_DATA: scratch, PORT: "9999" } });
  expect(rt.config.PORT).toBe("9999");
  expect(rt.config.HOST).toBe("0.0.0.0");
  await rt.stop();
});
