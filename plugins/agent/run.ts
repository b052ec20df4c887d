// One request to an agent, on any client: find or open its conversation,
// record what was said, run the loop, record the answer.
import { formatTime } from "../../core/scheduler/recurrence.ts";
import { notFound } from "../../core/errors.ts";
import type { Ctx } from "../../core/plugin.ts";
import { addMessage, conversationByThread, conversationOf, openConversation, recentMessages, type Client, type Conversation } from "../recall/store.ts";
import { agentName, agentOrThrow } from "./agents.ts";
import type { AskResult, RunHint } from "./host.ts";
import { boundMessage, runAgent, type Limits } from "./loop.ts";

export type AgentCtx = Ctx & { ai: Ctx["ai"]; agentHost: Ctx["agentHost"] };

function setting(ctx: Ctx, key: string, fallback: number): number {
  const n = Number(ctx.config[key]);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

export function limitsOf(ctx: Ctx): Limits {
  return { steps: Math.floor(setting(ctx, "AGENT_MAX_STEPS", 8)), ms: setting(ctx, "AGENT_MAX_SECONDS", 120) * 1000, credits: setting(ctx, "AGENT_MAX_CREDITS", 20) };
}

/** Scheduled firings (an event's prompt) run with a request id of the scheduler's; their answers go out by mail. */
function clientOf(ctx: Ctx, hint: RunHint | null): Client {
  if (hint) return hint.client;
  return ctx.requestId.startsWith("schedule-") ? "mail" : "cli";
}

export async function ask(args: { prompt: string; agent?: string; conversation?: string }, ctx: AgentCtx): Promise<AskResult> {
  const owner = ctx.account;
  const hint = ctx.agentHost.hint();
  const client = clientOf(ctx, hint);
  const at = () => ctx.clock.now().getTime();
  // Reads go through the write lock too: outside a transaction this method's
  // connection is the writer, which may hold another call's uncommitted work.
  const { conv, agent, history } = await ctx.writes(async (db) => {
    let conv: Conversation | null = null;
    if (args.conversation) {
      conv = await conversationOf(db, owner.id, args.conversation);
      if (!conv) throw notFound(`no conversation with id "${args.conversation}"`);
    } else if (hint?.thread) conv = await conversationByThread(db, owner.id, client, [hint.thread]);
    const name = args.agent !== undefined ? agentName(args.agent) : (conv?.agent ?? agentName(undefined));
    const agent = await agentOrThrow(db, owner.id, name);
    const history = conv
      ? (await recentMessages(db, conv.id, Math.floor(setting(ctx, "AGENT_HISTORY", 20))))
          .filter((m) => m.role !== "tool")
          .map((m) => ({ role: m.role as "user" | "assistant", content: m.content }))
      : [];
    return { conv, agent, history };
  });
  // No model, no turn: a 501 here names the settings, and nothing is recorded as said.
  await ctx.ai.provider();
  const c = await ctx.writes(async (db) => {
    let open = conv;
    if (!open && hint?.thread) {
      // Messages of one thread arriving at once continue one conversation: the first opens it, the others find it.
      await ctx.lock(`thread:${owner.id}:${client}:${hint.thread}`);
      open = await conversationByThread(db, owner.id, client, [hint.thread]);
    }
    open ??= await openConversation(db, { owner: owner.id, client, agent: agent.name, topic: hint?.topic || args.prompt, thread: hint?.thread ?? null, at: at() });
    await addMessage(db, ctx.index, open, { role: "user", content: args.prompt, at: at() });
    return open;
  });

  const now = ctx.clock.now();
  const system = [
    `You are "${agent.name}", the agent of ${owner.username} on their Hearth home server. You act for them: the tools are the server's methods, called as ${owner.username}, at their prices.`,
    `It is now ${formatTime(now.getTime(), 0)}. This conversation is on ${client === "web" ? "the web" : client === "mail" ? "mail" : "the command line"}.`,
    agent.instruction,
  ].join("\n\n");

  const limits = limitsOf(ctx);
  const out = await runAgent({
    ai: ctx.ai,
    host: ctx.agentHost,
    clock: ctx.clock,
    limits,
    system,
    history,
    prompt: args.prompt,
    onText: hint?.onText,
    onTool: hint?.onTool,
    signal: hint?.signal,
    onCall: (tool, callArgs, result) => ctx.writes(async (db) => void (await addMessage(db, ctx.index, c, { role: "tool", content: `${tool} ${JSON.stringify(callArgs)}\n${result}`, at: at() }))),
  });
  const bound = boundMessage(out.stopped, limits);
  const answer = [out.answer, bound].filter(Boolean).join("\n\n") || "(no answer)";
  await ctx.writes(async (db) => void (await addMessage(db, ctx.index, c, { role: "assistant", content: answer, at: at() })));
  return { answer, conversation: c.id, agent: agent.name, steps: out.steps, stopped: out.stopped, calls: out.calls, credits: out.credits };
}
