// Chat completions in the OpenAI wire format: the request body, the answer
// (text and tool calls), and the server-sent-event stream of chunks.
import { HearthError, upstream } from "../errors.ts";
import { errorWords, late, open, postJson, Transient, type Endpoint, type PostOptions } from "./wire.ts";

export interface ContentPart {
  type: "text" | "image_url";
  text?: string;
  image_url?: { url: string };
}

export interface ToolCallWire {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | ContentPart[] | null;
  /** On assistant messages: the calls the model asked for, as it sent them. */
  tool_calls?: ToolCallWire[];
  /** On tool messages: the id of the call this answers. */
  tool_call_id?: string;
  name?: string;
}

export interface ToolDef {
  type: "function";
  function: { name: string; description?: string; parameters: Record<string, unknown>; strict?: boolean };
}

export type ToolChoice = "auto" | "none" | "required" | { type: "function"; function: { name: string } };

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolDef[];
  tool_choice?: ToolChoice;
  /** "extract" uses AI_MODEL_EXTRACT; default AI_MODEL. */
  task?: "default" | "extract";
  /** A model name that overrides both. */
  model?: string;
  /** Asks for a JSON object answer (response_format json_object). */
  json?: boolean;
  max_tokens?: number;
  temperature?: number;
  /** Streams: called with each piece of text as it arrives. */
  onText?: (delta: string) => void;
  signal?: AbortSignal;
}

export interface ToolCall {
  id: string;
  name: string;
  /** The parsed arguments; null when the model sent arguments that are not a JSON object (see `invalid`). */
  arguments: Record<string, unknown> | null;
  /** Why the arguments could not be used, to tell the model in the tool result. */
  invalid?: string;
  /** The arguments exactly as sent. */
  raw: string;
}

export interface Usage {
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
}

export interface ChatAnswer {
  /** The answer's text ("" when the model only called tools), reasoning blocks removed. */
  text: string;
  tool_calls: ToolCall[];
  /** The assistant message to append to `messages` before the tool results. */
  message: ChatMessage;
  /** "stop", "length", "tool_calls", "content_filter", ... */
  finish_reason: string;
  usage: Usage;
  model: string;
}

export function requestBody(req: ChatRequest, model: string, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { model, messages: req.messages };
  if (req.tools?.length) {
    body.tools = req.tools;
    if (req.tool_choice) body.tool_choice = req.tool_choice;
  }
  if (req.json) body.response_format = { type: "json_object" };
  if (req.max_tokens !== undefined) body.max_tokens = req.max_tokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

const malformed = (ep: Endpoint, what: string) => new Transient(upstream("upstream_failed", `the AI provider at ${ep.label} sent ${what}`));

// Reasoning models served through Ollama or llama.cpp put their thinking
// before the answer in <think> tags.
const stripThinking = (s: string) => s.replace(/^\s*<think>[\s\S]*?<\/think>\s*/, "");

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p?.text === "string" ? p.text : "")).join("");
  return "";
}

export function parseToolCall(tc: ToolCallWire, i: number): ToolCall {
  const raw = typeof tc.function?.arguments === "string" ? tc.function.arguments : JSON.stringify(tc.function?.arguments ?? {});
  const id = typeof tc.id === "string" && tc.id ? tc.id : `call_${i}`;
  const name = String(tc.function?.name ?? "");
  let args: Record<string, unknown> | null = null;
  let invalid: string | undefined;
  try {
    const parsed = raw.trim() ? JSON.parse(raw) : {};
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) args = parsed;
    else invalid = "the arguments must be a JSON object";
  } catch (e) {
    invalid = `the arguments are not valid JSON (${(e as Error).message})`;
  }
  return invalid ? { id, name, arguments: null, invalid, raw } : { id, name, arguments: args, raw };
}

function usageOf(u: any): Usage {
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);
  const prompt = n(u?.prompt_tokens);
  const completion = n(u?.completion_tokens);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: n(u?.total_tokens) ?? (prompt !== null && completion !== null ? prompt + completion : null) };
}

function answerOf(ep: Endpoint, model: string, msg: any, finish: unknown, usage: unknown, answeredModel: unknown): ChatAnswer {
  const wireCalls: ToolCallWire[] = Array.isArray(msg.tool_calls) ? msg.tool_calls : [];
  for (const tc of wireCalls) if (!tc || typeof tc.function?.name !== "string") throw malformed(ep, "a tool call without a function name");
  const tool_calls = wireCalls.map(parseToolCall);
  const message: ChatMessage = { role: "assistant", content: typeof msg.content === "string" || Array.isArray(msg.content) ? msg.content : null };
  if (wireCalls.length) message.tool_calls = wireCalls.map((tc, i) => ({ id: tool_calls[i].id, type: "function", function: { name: tc.function.name, arguments: tool_calls[i].raw } }));
  return {
    text: stripThinking(textOf(msg.content)),
    tool_calls,
    message,
    finish_reason: typeof finish === "string" ? finish : tool_calls.length ? "tool_calls" : "stop",
    usage: usageOf(usage),
    model: typeof answeredModel === "string" && answeredModel ? answeredModel : model,
  };
}

/** One chat completion without streaming. */
export async function complete(ep: Endpoint, req: ChatRequest, model: string, opts: PostOptions): Promise<ChatAnswer> {
  const body = await postJson(ep, "/chat/completions", requestBody(req, model, false), model, opts);
  if (body?.error) throw upstream("upstream_failed", `the AI provider at ${ep.label} answered with an error: ${errorWords(ep, body.error)}`);
  const choice = Array.isArray(body?.choices) ? body.choices[0] : undefined;
  const msg = choice?.message;
  if (!msg || typeof msg !== "object") throw malformed(ep, "an answer without choices[0].message");
  return answerOf(ep, model, msg, choice.finish_reason, body.usage, body.model);
}

/** Thrown inside a stream after text reached the caller: a retry would repeat it, so the failure is final. */
class Final extends Error {
  constructor(readonly error: HearthError) {
    super(error.message);
  }
}

/**
 * One chat completion streamed as server-sent events; text pieces go to
 * req.onText as they arrive, and the whole answer is returned at the end.
 * A failure before any text reached the caller may be retried.
 */
export async function streamed(ep: Endpoint, req: ChatRequest, model: string, opts: PostOptions): Promise<ChatAnswer> {
  const { res, done } = await open(ep, "/chat/completions", requestBody(req, model, true), model, opts, "text/event-stream");
  let sent = false;
  const fail = (e: HearthError) => (sent ? new Final(e) : new Transient(e));
  try {
    // A server that ignores stream: true sends the whole completion as JSON.
    if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) {
      const text = await res.text();
      let body: any;
      try {
        body = JSON.parse(text);
      } catch {
        throw malformed(ep, "an answer that is neither an event stream nor JSON");
      }
      const choice = body?.choices?.[0];
      if (!choice?.message) throw malformed(ep, "an answer without choices[0].message");
      const a = answerOf(ep, model, choice.message, choice.finish_reason, body.usage, body.model);
      if (a.text) req.onText?.(a.text);
      return a;
    }
    let content = "";
    let finish: string | undefined;
    let usage: unknown;
    let answeredModel: unknown;
    const calls: { id?: string; name: string; args: string }[] = [];
    let thinking: boolean | undefined;
    let afterThinking = false;
    let held = "";
    const emit = (piece: string) => {
      content += piece;
      // Hold text back while it may still be a <think> block, so reasoning never reaches the caller.
      if (thinking === undefined) {
        held += piece;
        const t = held.trimStart();
        if (!t) return;
        if ("<think>".startsWith(t.slice(0, 7)) && t.length < 7) return;
        thinking = t.startsWith("<think>");
        if (thinking) return;
        piece = held;
      } else if (thinking) {
        const end = content.indexOf("</think>");
        if (end < 0) return;
        thinking = false;
        afterThinking = true;
        piece = content.slice(end + 8);
      }
      if (afterThinking) {
        piece = piece.trimStart();
        if (!piece) return;
        afterThinking = false;
      }
      sent = true;
      req.onText?.(piece);
    };
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    let ended = false;
    const handle = (line: string) => {
      if (!line.startsWith("data:")) return;
      const data = line.slice(5).trim();
      if (!data) return;
      if (data === "[DONE]") {
        ended = true;
        return;
      }
      let chunk: any;
      try {
        chunk = JSON.parse(data);
      } catch {
        throw fail(upstream("upstream_failed", `the AI provider at ${ep.label} sent a stream event that is not JSON`));
      }
      if (chunk?.error) throw fail(upstream("upstream_failed", `the AI provider at ${ep.label} stopped with an error: ${errorWords(ep, chunk.error)}`));
      if (chunk.usage) usage = chunk.usage;
      if (chunk.model) answeredModel = chunk.model;
      const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
      if (!choice) return;
      if (typeof choice.finish_reason === "string") finish = choice.finish_reason;
      const d = choice.delta ?? {};
      if (typeof d.content === "string" && d.content) emit(d.content);
      if (Array.isArray(d.tool_calls))
        for (const tc of d.tool_calls) {
          const i = typeof tc.index === "number" ? tc.index : calls.length;
          calls[i] ??= { name: "", args: "" };
          if (tc.id) calls[i].id = tc.id;
          if (tc.function?.name) calls[i].name += tc.function.name;
          if (typeof tc.function?.arguments === "string") calls[i].args += tc.function.arguments;
        }
    };
    for (;;) {
      let r;
      try {
        r = await reader.read();
      } catch {
        if (done.timedOut()) throw fail(late(ep, opts));
        throw fail(upstream("upstream_failed", `the AI provider at ${ep.label} broke off its answer`));
      }
      if (r.done) break;
      done.touch();
      buf += r.value;
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).replace(/\r$/, "");
        buf = buf.slice(nl + 1);
        handle(line);
      }
      if (ended) {
        void reader.cancel().catch(() => {});
        break;
      }
    }
    if (buf) handle(buf.replace(/\r$/, ""));
    if (!ended && finish === undefined) throw fail(upstream("upstream_failed", `the AI provider at ${ep.label} ended its stream before the answer was complete`));
    if (thinking === undefined && held.trim()) {
      sent = true;
      req.onText?.(held);
    }
    const wire: ToolCallWire[] = calls.filter(Boolean).map((c, i) => ({ id: c.id ?? `call_${i}`, type: "function", function: { name: c.name, arguments: c.args } }));
    for (const c of wire) if (!c.function.name) throw fail(upstream("upstream_failed", `the AI provider at ${ep.label} sent a tool call without a function name`));
    return answerOf(ep, model, { content, tool_calls: wire }, finish, usage, answeredModel);
  } catch (e) {
    if (e instanceof Final) throw e.error;
    throw e;
  } finally {
    done.clear();
  }
}
