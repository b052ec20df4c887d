// one store: the Dockerfile and its files; nothing in it starts the pass's store
// No Docker engine runs the tests, so the image's files are held to what can
// be checked without one: both linters pass, the Dockerfile has the shape the
// README promises, what it copies exists and is not ignored, and the binary's
// own health check answers as the HEALTHCHECK expects.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { validate } from "dockerfile-utils";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startHearth, type Hearth } from "../harness.ts";

const root = join(import.meta.dir, "..", "..");
const dockerfile = readFileSync(join(root, "docker", "Dockerfile"), "utf8");
const ignore = readFileSync(join(root, "docker", "Dockerfile.dockerignore"), "utf8")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"));
const compose = readFileSync(join(root, "docker", "compose.yml"), "utf8");

describe("docker/Dockerfile", () => {
  test("passes dockerfile-utils' linter", () => {
    const problems = validate(dockerfile).map((d) => `line ${d.range.start.line + 1}: ${d.message}`);
    expect(problems).toEqual([]);
  });

  test("builds on the official Bun image and runs the binary alone, as a non-root user, with /data and a health check", () => {
    const from = [...dockerfile.matchAll(/^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/gim)].map((m) => m[1]);
    expect(from[0]).toBe("oven/bun:${BUN_VERSION}");
    expect(from.length).toBe(2);
    expect(dockerfile).toMatch(/^RUN bun run build/m);
    expect(dockerfile).toMatch(/^COPY --from=build \/src\/dist\/hearth \/usr\/local\/bin\/hearth$/m);
    const user = /^USER\s+(\S+)/m.exec(dockerfile)?.[1] ?? "";
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    expect(dockerfile).toMatch(/^VOLUME \["\/data"\]$/m);
    expect(dockerfile).toMatch(/HEARTH_DATA=\/data/);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*CMD \["\/usr\/local\/bin\/hearth", "health"\]$/m);
  });

  test("everything it copies from the sources exists and is not left out of the build context", () => {
    const sources = [...dockerfile.matchAll(/^COPY --from=build (?:--chown=\S+ )?(.+) \S+$/gm)].flatMap((m) => m[1].split(/\s+/));
    const fromRepo = sources.filter((s) => s.startsWith("/src/") && !s.startsWith("/src/dist/")).map((s) => s.slice("/src/".length));
    expect(fromRepo.length).toBeGreaterThan(0);
    const needed = ["package.json", "bun.lock", "core/build.ts", "core/cli/main.ts", "plugins/notes/index.ts", ...fromRepo];
    for (const path of needed) {
      expect(existsSync(join(root, path)), path).toBe(true);
      const top = path.split("/")[0];
      expect(ignore.includes(top) || ignore.includes(path), `${path} is ignored`).toBe(false);
    }
    for (const excluded of ["node_modules", "data", ".git"]) expect(ignore).toContain(excluded);
  });
});

describe("docker/compose.yml", () => {
  test("passes dclint", () => {
    const p = Bun.spawnSync(["bun", join(root, "node_modules", ".bin", "dclint"), join(root, "docker", "compose.yml")], { cwd: root });
    const said = p.stdout.toString() + p.stderr.toString();
    expect(said.trim()).toBe("");
    expect(p.exitCode).toBe(0);
  });

  test("builds Hearth from the Dockerfile with its data in a volume, and offers Ollama as the ai profile", () => {
    expect(compose).toContain("dockerfile: docker/Dockerfile");
    expect(compose).toMatch(/- hearth-data:\/data/);
    expect(compose).toMatch(/ollama:\n\s+image: "ollama\/ollama:/);
    expect(compose).toMatch(/profiles: \["ai"\]/);
    expect(compose).toContain("AI_OLLAMA_URL: http://ollama:11434");
  });
});

describe("hearth health", () => {
  let h: Hearth;
  beforeAll(async () => {
    h = await startHearth();
  });
  afterAll(async () => {
    await h.stop();
  });
  const health = async (url: string) => {
    const p = Bun.spawn(["bun", join(root, "core", "cli", "main.ts"), "health", "--url", url], { stdout: "pipe", stderr: "pipe", env: { ...process.env, HEARTH_LOG: "off" } });
    return { code: await p.exited, said: await new Response(p.stderr).text() };
  };

  test("exits 0 when the server answers /health, 1 naming the address when nothing listens", async () => {
    expect((await health(h.url)).code).toBe(0);
    const down = await health("http://127.0.0.1:9");
    expect(down.code).toBe(1);
    expect(down.said).toContain("http://127.0.0.1:9/health did not answer");
  });
});
