// The agent's loop: ask the model with the tools on offer, run the calls it
// asks for through dispatch, hand back their results, and ask again until it
// answers in words or a bound is reached (steps, time on the instance clock,
// credits spent by its calls), saying which bound stopped it.
import type { Ai, ChatMessage, ToolDef } from "../../core/ai/index.ts";
import { asHearthError } from "../../core/errors.ts";
import type { Clock } from "../../core/plugin.ts";
import type { AgentHost, Tool } from "./host.ts";

export interface Limits {
  steps: number;
  ms: number;
  credits: number;
}

export interface Turn {
  role: "user" | "assistant";
  content: string;
}

export interface RunInput {
  ai: Ai;
  host: AgentHost;
  clock: Clock;
  limits: Limits;
  system: string;
  history: Turn[];
  prompt: string;
  onText?: (piece: string) => void;
  onTool?: (name: string, ok: boolean) => void;
  signal?: AbortSignal;
  /** Each tool call and its result, as it happens, for the conversation's record. */
  onCall?: (name: string, args: unknown, result: string) => void | Promise<void>;
}

export interface RunOutcome {
  answer: string;
  steps: number;
  stopped: "steps" | "time" | "credits" | null;
  calls: { tool: string; ok: boolean; status?: number }[];
  credits: number;
}

/** Longest tool result handed back to the model; the rest is cut with a note. */
const RESULT_CAP = 12_000;

function asText(v: unknown): string {
  const s = typeof v === "string" ? v : JSON.stringify(v ?? null);
  return s.length <= RESULT_CAP ? s : `${s.slice(0, RESULT_CAP)}… (cut: ${s.length} characters in all)`;
}

export function boundMessage(stopped: RunOutcome["stopped"], limits: Limits): string {
  if (stopped === "steps") return `I stopped after ${limits.steps} steps, the most one request may take (AGENT_MAX_STEPS), before finishing.`;
  if (stopped === "time") return `I stopped after ${Math.round(limits.ms / 1000)} seconds, the longest one request may run (AGENT_MAX_SECONDS), before finishing.`;
  if (stopped === "credits") return `I stopped before spending more than ${limits.credits} credits, the most one request may spend (AGENT_MAX_CREDITS), before finishing.`;
  return "";
}

export async function runAgent(o: RunInput): Promise<RunOutcome> {
  const tools = o.host.tools();
  const byName = new Map<string, Tool>(tools.map((t) => [t.name, t]));
  const defs: ToolDef[] = tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } }));
  const messages: ChatMessage[] = [{ role: "system", content: o.system }, ...o.history, { role: "user", content: o.prompt }];
  const deadline = o.clock.now().getTime() + o.limits.ms;
  const calls: RunOutcome["calls"] = [];
  let credits = 0;
  let steps = 0;
  let said = "";
  let stopped: RunOutcome["stopped"] = null;

  for (;;) {
    if (steps >= o.limits.steps) {
      stopped = "steps";
      break;
    }
    if (o.clock.now().getTime() >= deadline) {
      stopped = "time";
      break;
    }
    steps++;
    const a = await o.ai.chat({ messages, tools: defs.length ? defs : undefined, tool_choice: defs.length ? "auto" : undefined, onText: o.onText, signal: o.signal });
    if (a.text) said = a.text;
    if (!a.tool_calls.length) return { answer: a.text, steps, stopped: null, calls, credits };
    messages.push(a.message);
    for (const call of a.tool_calls) {
      const tool = byName.get(call.name);
      let result: string;
      if (!tool) {
        result = asText({ error: { kind: "not_found", message: `no tool named "${call.name}" is offered here` } });
        calls.push({ tool: call.name, ok: false, status: 404 });
      } else if (!call.arguments) {
        result = asText({ error: { kind: "invalid_argument", message: call.invalid ?? "the arguments were not a JSON object" } });
        calls.push({ tool: call.name, ok: false, status: 400 });
      } else if (stopped === "credits" || credits + (await o.host.price(tool.entry, call.arguments)) > o.limits.credits) {
        stopped = "credits";
        result = asText({ error: { kind: "payment_required", message: `not called: it would take this request past ${o.limits.credits} credits` } });
        calls.push({ tool: call.name, ok: false, status: 402 });
      } else {
        const price = await o.host.price(tool.entry, call.arguments);
        try {
          result = asText({ result: await o.host.call(tool.entry, call.arguments) });
          credits += price;
          calls.push({ tool: call.name, ok: true });
        } catch (e) {
          const he = asHearthError(e);
          result = asText({ error: { status: he.status, kind: he.kind, message: he.message, ...(he.field ? { field: he.field } : {}) } });
          calls.push({ tool: call.name, ok: false, status: he.status });
        }
      }
      o.onTool?.(call.name, calls[calls.length - 1].ok);
      await o.onCall?.(call.name, call.arguments ?? call.raw, result);
      messages.push({ role: "tool", tool_call_id: call.id, content: result });
    }
    if (stopped === "credits") break;
  }
  return { answer: said, steps, stopped, calls, credits };
}
