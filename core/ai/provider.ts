// Which model server this instance talks to. AI_BASE_URL wins; without it,
// Ollama on this machine is used when it answers and has a model. The answer
// is remembered per runtime: a found provider until a request cannot reach
// it, a missing one for half a minute (so a blog post without a title does
// not probe on every call, yet starting Ollama is noticed soon).
import { HearthError } from "../errors.ts";
import type { Runtime } from "../runtime.ts";
import { providerMessage, type Endpoint } from "./wire.ts";

export interface Provider extends Endpoint {
  /** "AI_BASE_URL" or "ollama": where the choice came from. */
  source: "AI_BASE_URL" | "ollama";
  model: string;
  /** Model for extraction: AI_MODEL_EXTRACT, else model. */
  extractModel: string;
}

interface Known {
  provider: Provider | null;
  /** Why there is none: said in the 501. */
  why: string;
  at: number;
}

const known = new WeakMap<Runtime, Known>();
const MISSING_FOR_MS = 30_000;
const PROBE_MS = 1500;

export const SETTINGS = ["AI_BASE_URL", "AI_API_KEY", "AI_MODEL", "AI_MODEL_EXTRACT"];

export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

const trimBase = (u: string) => u.trim().replace(/\/+$/, "");

/** The 501 every method needing a model answers when there is none. */
export function notConfiguredError(why: string): HearthError {
  return new HearthError("not_configured", `no AI provider is configured${why ? ` (${why})` : ""}: set AI_BASE_URL to an OpenAI-compatible API (e.g. https://api.openai.com/v1), AI_API_KEY and AI_MODEL (optionally AI_MODEL_EXTRACT), or run Ollama with a model pulled on this machine`, {
    extra: { settings: SETTINGS },
  });
}

/** Model ids a server lists at GET /models (OpenAI's {"data": [{"id"}]}); null when it cannot be asked. */
async function listModels(base: string, key: string): Promise<{ ids: string[] } | { error: string }> {
  const abort = new AbortController();
  const t = setTimeout(() => abort.abort(), PROBE_MS);
  try {
    const res = await fetch(`${base}/models`, { headers: key ? { authorization: `Bearer ${key}` } : {}, signal: abort.signal });
    const text = await res.text();
    const said = providerMessage(text, [base, key]);
    if (!res.ok) return { error: `${hostOf(base)} answered HTTP ${res.status} to GET /models${said ? `: ${said}` : ""}` };
    const body = JSON.parse(text);
    if (!Array.isArray(body?.data)) return { error: `${hostOf(base)} did not list its models` };
    return { ids: body.data.map((m: { id?: unknown }) => m?.id).filter((id: unknown): id is string => typeof id === "string" && id.length > 0) };
  } catch {
    return { error: `nothing answers at ${hostOf(base)}` };
  } finally {
    clearTimeout(t);
  }
}

async function resolve(rt: Runtime): Promise<Omit<Known, "at">> {
  const cfg = rt.config;
  const configured = trimBase(cfg.AI_BASE_URL ?? "");
  if (configured) {
    if (!/^https?:\/\//.test(configured)) return { provider: null, why: "AI_BASE_URL must start with http:// or https://" };
    const key = cfg.AI_API_KEY ?? "";
    let model = (cfg.AI_MODEL ?? "").trim();
    if (!model) {
      const listed = await listModels(configured, key);
      if ("error" in listed) return { provider: null, why: `AI_MODEL is empty and the model could not be asked of ${hostOf(configured)}: ${listed.error}` };
      if (listed.ids.length !== 1)
        return { provider: null, why: `AI_MODEL is empty and ${hostOf(configured)} offers ${listed.ids.length ? `${listed.ids.length} models (${listed.ids.slice(0, 8).join(", ")}${listed.ids.length > 8 ? ", ..." : ""})` : "no models"}: name one` };
      model = listed.ids[0];
    }
    return { provider: { source: "AI_BASE_URL", base: configured, key, label: hostOf(configured), model, extractModel: (cfg.AI_MODEL_EXTRACT ?? "").trim() || model }, why: "" };
  }
  const ollama = trimBase(cfg.AI_OLLAMA_URL ?? "");
  if (!ollama) return { provider: null, why: "AI_BASE_URL is empty and AI_OLLAMA_URL is empty" };
  const base = `${ollama}/v1`;
  const listed = await listModels(base, "");
  if ("error" in listed) return { provider: null, why: `AI_BASE_URL is empty and no Ollama answers at ${hostOf(ollama)}` };
  // Ollama lists the most recently pulled model first.
  const model = (cfg.AI_MODEL ?? "").trim() || listed.ids[0];
  if (!model) return { provider: null, why: `Ollama at ${hostOf(ollama)} has no models: pull one (ollama pull llama3.2)` };
  return { provider: { source: "ollama", base, key: "", label: `Ollama at ${hostOf(ollama)}`, model, extractModel: (cfg.AI_MODEL_EXTRACT ?? "").trim() || model }, why: "" };
}

const pending = new WeakMap<Runtime, Promise<Known>>();

/** The provider in use, or null with the reason; looks again once the last answer is stale. */
export async function findProvider(rt: Runtime): Promise<Known> {
  const now = rt.clock.now().getTime();
  const k = known.get(rt);
  if (k && (k.provider || now - k.at < MISSING_FOR_MS)) return k;
  let p = pending.get(rt);
  if (!p) {
    p = resolve(rt).then((r) => {
      const entry = { ...r, at: rt.clock.now().getTime() };
      known.set(rt, entry);
      pending.delete(rt);
      return entry;
    });
    pending.set(rt, p);
  }
  return p;
}

/** Forgets the provider after it could not be reached, so the next call looks again. */
export function forgetProvider(rt: Runtime) {
  known.delete(rt);
}

/** The endpoint images are generated at: AI_IMAGE_BASE_URL, else the chat provider. */
export async function imageEndpoint(rt: Runtime): Promise<Endpoint & { model: string }> {
  const cfg = rt.config;
  const model = (cfg.AI_IMAGE_MODEL ?? "").trim();
  const own = trimBase(cfg.AI_IMAGE_BASE_URL ?? "");
  if (!model)
    throw new HearthError("not_configured", "no image model is configured: set AI_IMAGE_MODEL (gpt-image-1, dall-e-3, ...) and, when images come from another server than AI_BASE_URL, AI_IMAGE_BASE_URL and AI_IMAGE_API_KEY", {
      extra: { settings: ["AI_IMAGE_MODEL", "AI_IMAGE_BASE_URL", "AI_IMAGE_API_KEY", ...SETTINGS] },
    });
  if (own) return { base: own, key: (cfg.AI_IMAGE_API_KEY ?? "") || (cfg.AI_API_KEY ?? ""), label: hostOf(own), model };
  const { provider, why } = await findProvider(rt);
  if (!provider) throw notConfiguredError(why);
  return { base: provider.base, key: (cfg.AI_IMAGE_API_KEY ?? "") || provider.key, label: provider.label, model };
}
