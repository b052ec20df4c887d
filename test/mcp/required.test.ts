// What a tool says a caller must send is what the spec says, exactly: an
// argument with a default is optional, so models do not invent values for it
// and clients that validate arguments against inputSchema accept {}. The
// OpenAPI document publishes the same schema.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startHearth, type Hearth } from "../harness.ts";
import { mcpClient } from "./client.ts";

const specFile = join(import.meta.dir, "../../../shared/spec/methods.json");
interface SpecMethod {
  service: string;
  method: string;
  verb: "GET" | "POST";
  tool: string;
  args: { name: string; required: boolean }[];
}
const spec = existsSync(specFile) ? (JSON.parse(readFileSync(specFile, "utf8")) as { count: number; methods: SpecMethod[] }) : null;
const requiredBySpec = (m: SpecMethod) => m.args.filter((a) => a.required).map((a) => a.name).sort();

let h: Hearth;
let token: string;
let client: Awaited<ReturnType<typeof mcpClient>>;
let tools: Map<string, Tool>;

beforeAll(async () => {
  h = await startHearth();
  token = await h.token("alice");
  client = await mcpClient(h.url, { token });
  tools = new Map((await client.client.listTools()).tools.map((t) => [t.name, t]));
});
afterAll(async () => {
  await client.close();
  await h.stop();
});

test.skipIf(!spec)("every tool's inputSchema.required is exactly the spec's required arguments", () => {
  expect(spec!.methods.length).toBe(spec!.count);
  const wrong: string[] = [];
  for (const m of spec!.methods) {
    const tool = tools.get(m.tool);
    if (!tool) {
      wrong.push(`${m.tool}: not listed`);
      continue;
    }
    const listed = [...(tool.inputSchema.required ?? [])].sort();
    if (JSON.stringify(listed) !== JSON.stringify(requiredBySpec(m))) wrong.push(`${m.tool}: lists [${listed}], the spec requires [${requiredBySpec(m)}]`);
  }
  expect(wrong).toEqual([]);
});

test.skipIf(!spec)("the OpenAPI document requires the same arguments as the tools", async () => {
  const doc = (await (await fetch(`${h.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, any>> };
  const wrong: string[] = [];
  for (const m of spec!.methods) {
    const op = doc.paths[`/api/v1/${m.service}/${m.method}`]?.[m.verb.toLowerCase()];
    const listed: string[] =
      m.verb === "GET"
        ? ((op?.parameters ?? []) as { name: string; required: boolean }[]).filter((p) => p.required).map((p) => p.name)
        : (op?.requestBody?.content?.["application/json"]?.schema?.required ?? []);
    if (JSON.stringify([...listed].sort()) !== JSON.stringify(requiredBySpec(m))) wrong.push(`${m.service}/${m.method}: lists [${listed}], the spec requires [${requiredBySpec(m)}]`);
  }
  expect(wrong).toEqual([]);
});

test.skipIf(!spec)("{} passes a validating client's check wherever the spec requires nothing, and the call runs", async () => {
  const validator = new AjvJsonSchemaValidator();
  const refused: string[] = [];
  for (const m of spec!.methods) {
    if (requiredBySpec(m).length) continue;
    const check = validator.getValidator(tools.get(m.tool)!.inputSchema as never)({});
    if (!check.valid) refused.push(`${m.tool}: ${check.errorMessage}`);
  }
  expect(refused).toEqual([]);
  // Tools whose arguments all have defaults, answered from the instance's own storage.
  for (const name of ["blog_list", "docs_list", "recall_list", "mail_inbox", "archive_list", "stream_list", "chat_rooms"]) {
    expect(tools.get(name)!.inputSchema.required).toBeUndefined();
    const r = await client.call(name, {});
    expect({ name, isError: r.isError ?? false }).toEqual({ name, isError: false });
    expect(r.structuredContent).toHaveProperty("result");
  }
});
