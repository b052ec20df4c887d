// Models: the capability `ai`, one client for any OpenAI-compatible server
// (OpenAI, OpenRouter, Ollama, llama.cpp's server, vLLM). A plugin declares
// `needs: ["ai"]` and gets `ctx.ai`:
//
//   await ctx.ai.available()   // true when a provider is configured or Ollama answers; never throws
//   await ctx.ai.provider()    // { source, label, model, extract_model }; 501 when there is none
//
//   const a = await ctx.ai.chat({
//     messages: [{ role: "system", content: "..." }, { role: "user", content: "..." }],
//     tools: [{ type: "function", function: { name: "notes_add", description: "...", parameters: { type: "object", properties: {...} } } }],
//     tool_choice: "auto",     // "auto" | "none" | "required" | { type: "function", function: { name } }
//     task: "extract",         // picks AI_MODEL_EXTRACT (default: AI_MODEL); `model` names one outright
//     json: true,              // response_format json_object
//     max_tokens, temperature, // sent only when given (reasoning models refuse a temperature)
//     onText: (piece) => ...,  // streams: text arrives in pieces, the whole answer is still returned
//     signal,                  // an AbortSignal that cancels the request
//   });
//   a.text            // the answer's text, "" when the model only called tools; <think> blocks removed
//   a.tool_calls      // [{ id, name, arguments (object, or null with `invalid` saying why), raw }]
//   a.message         // the assistant message to append to messages as-is (it carries tool_calls)
//   a.finish_reason   // "stop" | "length" | "tool_calls" | "content_filter" | ...
//   a.usage           // { prompt_tokens, completion_tokens, total_tokens } (null where the server said nothing)
//   a.model           // the model that answered
//
// An agent loop appends a.message, then one { role: "tool", tool_call_id: call.id,
// content: "<result as text>" } per call, and asks again until no tool_calls remain.
//
//   const img = await ctx.ai.image({ prompt, size: "1024x1024" });
//   img.bytes, img.type ("image/png"...), img.ext, img.revised_prompt?, img.model, img.usage
//
//   ctx.ai.spent()    // { requests, prompt_tokens, completion_tokens, total_tokens } of this call so far
//
//   await titleByModel(ctx.ai, text)   // a short title by the model, or null (no provider, or it failed)
//
// Settings (config/defaults.ts): AI_BASE_URL, AI_API_KEY, AI_MODEL,
// AI_MODEL_EXTRACT; without AI_BASE_URL, Ollama at AI_OLLAMA_URL is used when
// it answers and has a model. AI_TIMEOUT_MS bounds a request (the wait
// between chunks when streaming). Images: AI_IMAGE_MODEL, and optionally
// AI_IMAGE_BASE_URL / AI_IMAGE_API_KEY / AI_IMAGE_SIZE.
//
// Failures: no provider => 501 not_configured naming the settings (never a
// made-up answer); unreachable, HTTP 503 or 429 => 503; no answer in time =>
// 504; any other refusal, or an answer that is not the API's JSON => 502.
// A connection failure, HTTP 500/502/503/504 or a malformed answer is tried
// once more after UPSTREAM_RETRY_MS; a stream is retried only if no text had
// reached onText. A server that refuses json mode is asked again without
// it. Every request is recorded in ai_usage with its tokens (`hearth ai usage`).
import { HearthError } from "../errors.ts";
import { defineModule } from "../module.ts";
import type { Runtime } from "../runtime.ts";
import { complete, streamed, type ChatAnswer, type ChatRequest, type Usage } from "./chat.ts";
import { generateImage, type GeneratedImage, type ImageRequest } from "./images.ts";
import { aiCommand } from "./cli.ts";
import { aiMigrations } from "./migrations.ts";
import { findProvider, forgetProvider, imageEndpoint, notConfiguredError } from "./provider.ts";
import { recordUsage } from "./usage.ts";
import { withRetry, type PostOptions } from "./wire.ts";

export type { ChatAnswer, ChatMessage, ChatRequest, ContentPart, ToolCall, ToolChoice, ToolDef, Usage } from "./chat.ts";
export type { GeneratedImage, ImageRequest } from "./images.ts";
export { jsonIn } from "./json.ts";
export { titleByModel } from "./title.ts";

export interface ProviderInfo {
  /** "AI_BASE_URL" or "ollama". */
  source: string;
  /** Host of the server (never the key). */
  label: string;
  model: string;
  extract_model: string;
}

export interface Ai {
  available(): Promise<boolean>;
  provider(): Promise<ProviderInfo>;
  chat(req: ChatRequest): Promise<ChatAnswer>;
  image(req: ImageRequest): Promise<GeneratedImage>;
  spent(): Usage & { requests: number };
}

declare module "../plugin.ts" {
  interface CapabilityTypes {
    ai: Ai;
  }
}

function postOptions(rt: Runtime, signal?: AbortSignal): PostOptions {
  const timeoutMs = Number(rt.config.AI_TIMEOUT_MS) > 0 ? Number(rt.config.AI_TIMEOUT_MS) : 120_000;
  const retry = Number(rt.config.UPSTREAM_RETRY_MS);
  return { timeoutMs, retryDelayMs: Number.isFinite(retry) && retry >= 0 ? retry : 250, signal };
}

export function makeAi(rt: Runtime, service: string, requestId: string, account: string | null): Ai {
  const total = { requests: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const add = (u: Usage) => {
    total.requests++;
    total.prompt_tokens += u.prompt_tokens ?? 0;
    total.completion_tokens += u.completion_tokens ?? 0;
    total.total_tokens += u.total_tokens ?? 0;
  };

  async function run<T extends { usage: Usage }>(kind: "chat" | "image", model: string, provider: string, attempt: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const row = (outcome: string, u?: Usage) => ({
      at: rt.clock.now().getTime(),
      requestId,
      service,
      account,
      kind,
      model,
      provider,
      promptTokens: u?.prompt_tokens ?? null,
      completionTokens: u?.completion_tokens ?? null,
      totalTokens: u?.total_tokens ?? null,
      ms: Math.round(performance.now() - started),
      outcome,
    });
    try {
      const out = await attempt();
      add(out.usage);
      await recordUsage(rt, row("ok", out.usage));
      return out;
    } catch (e) {
      const kindOf = e instanceof HearthError ? e.kind : "internal";
      if (kindOf === "upstream_unavailable") forgetProvider(rt);
      total.requests++;
      await recordUsage(rt, row(kindOf));
      throw e;
    }
  }

  return {
    async available() {
      return !!(await findProvider(rt)).provider;
    },
    async provider() {
      const { provider, why } = await findProvider(rt);
      if (!provider) throw notConfiguredError(why);
      return { source: provider.source, label: provider.label, model: provider.model, extract_model: provider.extractModel };
    },
    async chat(req) {
      const { provider, why } = await findProvider(rt);
      if (!provider) throw notConfiguredError(why);
      const model = req.model ?? (req.task === "extract" ? provider.extractModel : provider.model);
      const opts = postOptions(rt, req.signal);
      const once = (r: ChatRequest) => withRetry(opts, () => (r.onText ? streamed(provider, r, model, opts) : complete(provider, r, model, opts)));
      return run("chat", model, provider.label, async () => {
        try {
          return await once(req);
        } catch (e) {
          // Some servers (LM Studio, older vLLM) refuse json_object mode; the caller checks the JSON itself, so ask plainly.
          if (req.json && e instanceof HearthError && e.kind === "upstream_failed" && /response_format|json_object/i.test(e.message)) return await once({ ...req, json: false });
          throw e;
        }
      });
    },
    async image(req) {
      const ep = await imageEndpoint(rt);
      const opts = postOptions(rt, req.signal);
      const size = req.size ?? rt.config.AI_IMAGE_SIZE ?? "1024x1024";
      return run("image", ep.model, ep.label, () => withRetry(opts, () => generateImage(ep, ep.model, { ...req, size }, opts)));
    },
    spent() {
      return { ...total };
    },
  };
}

export const aiModule = defineModule({
  name: "ai",
  // A provider changed in the settings is looked for again on the next call, not kept until a restart.
  setup: (rt) => rt.onReconfigure((changed) => {
    if (changed.some((k) => k.startsWith("AI_"))) forgetProvider(rt);
  }),
  provides: {
    capabilities: { ai: (s) => makeAi(s.rt, s.service, s.requestId, s.caller.account?.id ?? null) },
    migrations: { ai: aiMigrations },
    cli: { ai: aiCommand },
  },
});
