// The bookmarks plugin exactly as docs/plugins.md shows it: each file is the
// code block after its "`bookmarks/<file>`:" line, written to a folder.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export const docs = join(import.meta.dir, "../../docs/plugins.md");

/** Writes the docs' example plugin into a new temp folder; returns the plugin's folder. */
export function writeDocsExample(name = "bookmarks"): string {
  const text = readFileSync(docs, "utf8");
  const root = mkdtempSync(join(tmpdir(), "hearth-docs-plugin-"));
  const files = [...text.matchAll(new RegExp("^`" + name + "/([^`]+)`:\\n\\n```\\w*\\n([\\s\\S]*?)^```", "gm"))];
  if (files.length < 4) throw new Error(`docs/plugins.md shows ${files.length} files of ${name}`);
  for (const [, file, body] of files) {
    const path = join(root, name, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, body);
  }
  return join(root, name);
}

/** The docs' own test of the example ("## Testing a plugin"), as written. */
export function docsTest(): string {
  const m = /## Testing a plugin[\s\S]*?```ts\n([\s\S]*?)^```/m.exec(readFileSync(docs, "utf8"));
  if (!m) throw new Error("docs/plugins.md shows no test of the example");
  return m[1];
}

/** A loopback stand-in for Microlink answering in its format; counts requests. */
export function microlinkFixture() {
  const asked: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      const url = new URL(req.url).searchParams.get("url") ?? "";
      asked.push(url);
      return Response.json({ status: "success", statusCode: 200, data: { title: `Title of ${url}`, description: null, lang: "en", url } });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, asked, stop: () => server.stop(true) };
}
