#!/usr/bin/env bun
// `hearth`: serve, call any method of a running instance, list methods, make tokens.
// Exit codes: 0 ok, 1 refused, 2 usage.
import { accountNote } from "../auth/cli.ts";
import { ensureAccount, findAccount, issueToken } from "../auth/tokens.ts";
import { listen } from "../http/serve.ts";
import { coreSettings, loadSettingsFile, resolveConfig, settingsFile } from "../config.ts";
import { cliHost, coreWiring, createRuntime, loadRegistry } from "../instance.ts";
import { declaredSettings, type Runtime } from "../runtime.ts";
import type { CliCtx } from "../plugin.ts";
import { coerceValue } from "../validate.ts";
import { HearthError, type ErrorKind } from "../errors.ts";
import type { TSchema } from "@sinclair/typebox";
import { parseFlags } from "./args.ts";
import { welcomeLines } from "./welcome.ts";
import { keepOutcome, keptOutcome, restoreStaged } from "../backup/staged.ts";
import { restoreAtOnce } from "../backup/inplace.ts";
import { makeLogger } from "../log.ts";
import { sandboxAdvice, sandboxedPlugins } from "../http/sandbox.ts";
import { providerNamed } from "../upstream/providers.ts";
import pkg from "../../package.json" with { type: "json" };

const out = (s: string) => process.stdout.write(s.endsWith("\n") ? s : s + "\n");
const err = (s: string) => process.stderr.write(s.endsWith("\n") ? s : s + "\n");
const show = (v: unknown) => out(process.stdout.isTTY ? JSON.stringify(v, null, 2) : JSON.stringify(v));

const USAGE = `hearth ${pkg.version}: your personal services behind one API

usage:
  hearth [serve]                          start the server (PORT, HEARTH_DATA, ...)
  hearth help [service]                   list methods with their arguments
  hearth <service> <method> [--arg value] call a method on HEARTH_URL with HEARTH_TOKEN
  hearth token create --user NAME [--scopes notes,tasks] [--admin] [--name LABEL]
                                          create the account if missing; print a new token
  hearth version`;

async function serve(settingsRead: boolean): Promise<number> {
  // A backup the admin chose on /settings/restore and not yet restored comes back before anything opens the store.
  const settings = resolveConfig(coreSettings, process.env);
  const log = makeLogger(settings.HEARTH_LOG || "info");
  // Opened as part of that restore, so restored data this build cannot open is undone and the data before served instead.
  const open = async () => {
    const next = await createRuntime();
    try {
      await next.start();
    } catch (e) {
      // A store left open would hold the database a restore is about to put back.
      await next.stop().catch(() => next.store.close());
      throw e;
    }
    return next;
  };
  const opened: { rt: Runtime | null } = { rt: null };
  const at = new Date().toISOString();
  const staged = await restoreStaged(settings, log, async () => {
    opened.rt = await open();
  });
  let rt = opened.rt ?? (await open());
  if (staged) {
    rt.lastRestore = "ok" in staged ? { source: staged.source, at, ok: true, previous: staged.ok.previous } : { source: staged.source, at, ok: false, reason: staged.failed };
    await keepOutcome(rt.dataDir, rt.lastRestore, log);
  } else rt.lastRestore = keptOutcome(rt.dataDir);
  const app = listen(rt, { port: Number(rt.config.PORT), hostname: rt.config.HOST });
  // One confirmed later is restored at once, in this process, on the same port (core/backup/inplace.ts).
  restoreAtOnce(rt, {
    listening: app,
    open,
    serving: (next) => (rt = next),
    log,
  });
  // Start-up garbage (module evaluation, migrations, manifests) is collected now rather than
  // held until the first collection under load; an idle home server keeps a smaller footprint.
  setTimeout(() => Bun.gc(true), 500).unref();
  // The binary starts with a reluctant JIT (core/build.ts) so that run-once start-up code is not compiled; what runs
  // from now on is what requests need, compiled as usual.
  Bun.unsafe.setJITPolicy(1);
  const where = app.url;
  rt.log.info("listening", { url: where, data: rt.dataDir, services: rt.registry.services().length, methods: rt.registry.methods.size });
  // For the owner, on stdout whether or not it is a terminal (a service's journal, docker logs); the JSON log stays on stderr.
  out((await welcomeLines(rt, where, { file: settingsFile(process.env), read: settingsRead })).join("\n"));
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await app.stop();
    // The runtime serving now: a restore may have replaced the one started above.
    await rt.stop();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  return new Promise<number>(() => {});
}

async function help(service?: string): Promise<number> {
  const rt = await loadRegistry();
  const entries = rt.registry.list().filter((e) => !service || e.service === service);
  if (service && entries.length === 0) {
    err(`no service "${service}"; services: ${rt.registry.services().join(", ")}`);
    return 2;
  }
  const lines: string[] = [USAGE];
  // Pages others wrote left on the instance's own origin by these settings: said first, with what closes it.
  const advice = sandboxAdvice(sandboxedPlugins(rt.registry.plugins.values(), rt.config).filter((p) => !service || p.name === service), rt.config);
  if (advice) lines.push("", `note: ${advice}`);
  const commands = coreWiring.cli;
  if (!service && commands.size) {
    lines.push("", "commands:");
    for (const [name, c] of [...commands].sort(([a], [b]) => a.localeCompare(b))) lines.push(`  ${c.usage.startsWith("hearth") ? c.usage : `hearth ${name}`}`.padEnd(42) + ` ${c.summary}`);
  }
  const added = [...rt.registry.plugins.values()].flatMap((p) => Object.entries(p.def.cli ?? {}).map(([name, c]) => ({ name, c, service: p.def.name })));
  if (!service && added.length) {
    lines.push("", "commands of plugins:");
    for (const { name, c, service: by } of added.sort((a, b) => a.name.localeCompare(b.name)))
      lines.push(`  ${c.usage.replace(/^usage:\s*/, "").startsWith("hearth") ? c.usage.replace(/^usage:\s*/, "") : `hearth ${name}`}`.padEnd(42) + ` ${c.summary} (${by})`);
  }
  const plugin = service ? rt.registry.plugins.get(service) : undefined;
  if (plugin) {
    // What the owner lets this plugin reach and read, as its manifest declares it.
    const hosts = [...plugin.providers].map((n) => {
      const base = rt.config[`${n}_URL`] || providerNamed(n).url;
      return `${n} (${URL.canParse(base) ? new URL(base).host : base})`;
    });
    lines.push("", `reaches: ${hosts.join(", ") || "no outside provider"}`, `reads: ${[...plugin.settings].sort().join(", ") || "no setting"}`);
    // Its own settings, as config/example.env lists them: the default and what each does.
    const own = Object.entries(plugin.def.config ?? {});
    if (own.length) {
      lines.push("", "settings:");
      for (const [k, c] of own) lines.push(`  ${k}=${c.default}`, `      ${c.description}`);
    }
  }
  lines.push("", `methods (${entries.length}):`);
  for (const e of entries) {
    const props = e.def.args.properties as Record<string, TSchema>;
    const args = e.argNames.map((n) => (e.required.includes(n) ? `--${n}*` : `[--${n}]`) + (props[n].type ? ` ${props[n].type}` : "")).join(" ");
    const price = typeof e.def.price === "number" && e.def.price > 0 ? ` (${e.def.price} credits)` : typeof e.def.price === "function" ? " (priced)" : "";
    lines.push(`  ${e.service} ${e.name} ${args}`.trimEnd(), `      ${e.def.kind === "write" ? "POST" : "GET "} ${e.def.description}${price}`);
  }
  out(lines.join("\n"));
  return 0;
}

async function tokenCreate(argv: string[]): Promise<number> {
  const { flags } = parseFlags(argv);
  const user = flags.get("user")?.[0];
  if (!user || user === "true") {
    err("usage: hearth token create --user NAME [--scopes notes,tasks] [--admin] [--name LABEL]");
    return 2;
  }
  const scopesFlag = flags.get("scopes")?.[0];
  const rt = await createRuntime();
  rt.migrate();
  let scopes: "*" | string[] = "*";
  if (scopesFlag && scopesFlag !== "*") {
    scopes = scopesFlag.split(",").map((s) => s.trim()).filter(Boolean);
    const unknown = scopes.filter((s) => !rt.registry.plugins.has(s));
    if (unknown.length) {
      err(`unknown scope(s): ${unknown.join(", ")}; services are: ${rt.registry.services().join(", ")}`);
      await rt.stop();
      return 2;
    }
  }
  const made = !(await findAccount(rt.store, user.toLowerCase()));
  const account = await ensureAccount(rt.store, user.toLowerCase(), { admin: flags.has("admin") });
  const t = await issueToken(rt.store, account, { scopes, name: flags.get("name")?.[0] ?? "cli" });
  const note = await accountNote(rt, account, made);
  await rt.stop();
  // The token alone on stdout, so TOKEN=$(hearth token create …) captures it; what was made, and how to sign in, on stderr.
  out(t.token);
  if (note) err(note);
  return 0;
}

/** A command a plugin's manifest adds (`cli`), run with the settings it declared and calls to the running instance; null when no plugin adds it. */
async function pluginCommand(loaded: Awaited<ReturnType<typeof loadRegistry>>, name: string, argv: string[]): Promise<number | null> {
  const { registry, config } = loaded;
  const plugin = [...registry.plugins.values()].find((p) => p.def.cli && Object.hasOwn(p.def.cli, name));
  if (!plugin) return null;
  const service = plugin.def.name;
  const settings = declaredSettings(service, new Set([...plugin.settings, "HEARTH_URL", "HEARTH_TOKEN"]), config, { error: () => {} });
  const ctx: CliCtx = {
    config: settings,
    out: (s) => out(s),
    err: (s) => err(s),
    async call(svc, method, args = {}) {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (config.HEARTH_TOKEN) headers.authorization = `Bearer ${config.HEARTH_TOKEN}`;
      let res: Response;
      try {
        res = await fetch(`${config.HEARTH_URL.replace(/\/$/, "")}/api/v1/${svc}/${method}`, { method: "POST", headers, body: JSON.stringify(args) });
      } catch (e) {
        throw new HearthError("upstream_unavailable", `cannot reach ${config.HEARTH_URL} (${(e as Error).message}); is hearth serving there? Set HEARTH_URL.`);
      }
      const body = (await res.json().catch(() => null)) as { result?: unknown; error?: { message: string; kind: ErrorKind } } | null;
      if (res.ok && body && "result" in body) return body.result;
      throw body?.error ? new HearthError(body.error.kind, body.error.message) : new HearthError("upstream_failed", `HTTP ${res.status}`);
    },
  };
  return await plugin.def.cli![name].run(argv, ctx);
}

async function callMethod(rt: Awaited<ReturnType<typeof loadRegistry>>, service: string, method: string, argv: string[]): Promise<number> {
  const settings = resolveConfig(coreSettings, process.env);
  const entry = rt.registry.get(service, method);
  if (!entry) {
    if (!rt.registry.plugins.has(service)) err(`no service or command "${service}"\n\n${USAGE}`);
    else err(`no method "${method}" in ${service}; it has: ${rt.registry.plugins.get(service)!.methods.map((m) => m.name).join(", ")}`);
    return 2;
  }
  const { flags, rest } = parseFlags(argv);
  if (rest.length) {
    err(`unexpected argument "${rest[0]}": give arguments as --name value`);
    return 2;
  }
  const props = entry.def.args.properties as Record<string, TSchema>;
  const args: Record<string, unknown> = {};
  try {
    for (const [k, values] of flags) args[k] = props[k] ? coerceValue(props[k], values, k) : values[values.length - 1];
  } catch (e) {
    err((e as Error).message);
    return 2;
  }
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (settings.HEARTH_TOKEN) headers.authorization = `Bearer ${settings.HEARTH_TOKEN}`;
  let res: Response;
  try {
    res = await fetch(`${settings.HEARTH_URL.replace(/\/$/, "")}/api/v1/${service}/${method}`, { method: "POST", headers, body: JSON.stringify(args) });
  } catch (e) {
    err(`cannot reach ${settings.HEARTH_URL} (${(e as Error).message}); is hearth serving there? Set HEARTH_URL.`);
    return 1;
  }
  const body = (await res.json().catch(() => null)) as { result?: unknown; error?: { message: string; kind: string } } | null;
  if (res.ok && body && "result" in body) {
    show(body.result);
    return 0;
  }
  err(body?.error ? `${body.error.kind} (${res.status}): ${body.error.message}` : `HTTP ${res.status}`);
  return 1;
}

export async function main(argv: string[]): Promise<number> {
  const [first, second, ...rest] = argv;
  try {
    // Before anything reads a setting: the server and every command see the same file.
    const settingsRead = loadSettingsFile() !== null;
    if (!first || first === "serve") return await serve(settingsRead);
    if (first === "help" || first === "--help" || first === "-h") return await help(second);
    if (first === "version" || first === "--version") {
      out(pkg.version);
      return 0;
    }
    if (first === "token") {
      if (second === "create") return await tokenCreate(rest);
      err("usage: hearth token create --user NAME [--scopes notes,tasks] [--admin]");
      return 2;
    }
    const command = coreWiring.cli.get(first);
    if (command) return await command.run(argv.slice(1), cliHost);
    const loaded = await loadRegistry();
    const added = await pluginCommand(loaded, first, argv.slice(1));
    if (added !== null) return added;
    if (!second) {
      err(`"${first}" needs a method: hearth ${first} <method> [--arg value]; see hearth help ${first}`);
      return 2;
    }
    return await callMethod(loaded, first, second, rest);
  } catch (e) {
    if (e instanceof HearthError) {
      err(`${e.kind}: ${e.message}`);
      return 1;
    }
    err(e instanceof Error ? e.message : String(e));
    return 1;
  }
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2));
  process.exit(code);
}
