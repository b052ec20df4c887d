// The agent: a model that acts for an account through the instance's own
// methods, reachable on the web (/agent), by mail (handle+name) and from the
// command line (`hearth ask`), working through tasks assigned to it and
// answering event prompts. Every turn is recorded for recall.
import { Type as T } from "@sinclair/typebox";
import { and, eq } from "drizzle-orm";
import { notFound, definePlugin, read, write } from "hearth";
import { agentName, DEFAULT_AGENT, listAgents } from "./agents.ts";
import { agentCli } from "./cli.ts";
import { answerMail } from "./mail.ts";
import { agentPage, pageScript, sendRoute } from "./page.ts";
import { ask, type AgentCtx } from "./run.ts";
import { agentAgents } from "./schema.ts";
import { startWorker, stopWorker } from "./worker.ts";

const Name = T.String({ minLength: 1, maxLength: 32, description: "The agent's name: 1-32 of a-z, 0-9, _ and - (mail to handle+name reaches it)." });
const removers = new WeakMap<object, () => void>();

export default definePlugin({
  name: "agent",
  cli: agentCli,
  description: "Your agent: it answers and acts through this instance's methods as you, on the web (/agent), by mail to handle+name and with `hearth ask`, and works through tasks assigned to it.",
  needs: ["db", "index", "writes", "ai", "agentHost", "conversations", "mail", "lock"],
  screens: { agent: { title: "Agent", href: "/agent", order: 80 } },
  settings: ["HEARTH_METERING"],
  config: {
    AGENT_MAX_STEPS: { default: "8", description: "Most model requests one agent request may make (each may call tools); it says so when it stops there." },
    AGENT_MAX_SECONDS: { default: "120", description: "Longest one agent request may run, in seconds of the instance clock; it says so when it stops there." },
    AGENT_MAX_CREDITS: { default: "20", description: "Most credits the methods one agent request calls may spend; a call that would go past it is not made." },
    AGENT_SERVICES: {
      default: "",
      description: "Services whose methods the agent may use, comma-separated (notes,tasks,events,...); empty: every service. Each model request carries every tool offered, and some providers take at most 128.",
    },
    AGENT_HISTORY: { default: "20", description: "How many earlier messages of a conversation the model is given again when it continues." },
    AGENT_WORKER: { default: "on", description: "on: the agent works through tasks assigned to it (todo -> doing -> done with the result); off: it leaves them." },
    AGENT_WORKER_SECONDS: { default: "60", description: "How often the worker looks for tasks assigned to the agent, in seconds." },
  },
  methods: {
    ask: write({
      description:
        "Asks one of your agents (default: `default`) and returns its answer. It may call this instance's methods as you to answer (at their usual prices, within your token's scopes; never those withheld from the agent), bounded by AGENT_MAX_STEPS, AGENT_MAX_SECONDS and AGENT_MAX_CREDITS. Give `conversation` (from recall) to continue one. Recorded for recall.",
      args: T.Object({
        prompt: T.String({ minLength: 1, maxLength: 20_000, description: "What to ask or have done." }),
        agent: T.Optional(Name),
        conversation: T.Optional(T.String({ minLength: 1, maxLength: 64, description: "A conversation to continue (its id from recall/list)." })),
      }),
      access: "account",
      untrusted: true,
      price: 2,
      openWorld: true,
      // A run waits on the model for seconds; each method it calls takes its own transaction.
      transaction: false,
      // The model's work, and what the methods it calls do, cannot be taken back.
      irreversible: true,
      run: (args, ctx) => ask(args, ctx as AgentCtx),
    }),
    create: write({
      description: "Makes a named agent with an instruction (or changes an existing one's instruction); `default` may be given one too. Mail to handle+name then reaches it.",
      args: T.Object({ name: Name, instruction: T.String({ minLength: 1, maxLength: 10_000, description: "How this agent should work: its purpose, tone, what to use." }) }),
      access: "account",
      async run({ name, instruction }, ctx) {
        const n = agentName(name, "name");
        const now = ctx.clock.now().getTime();
        await ctx.db
          .insert(agentAgents)
          .values({ owner: ctx.account.id, name: n, instruction, created: now, updated: now })
          .onConflictDoUpdate({ target: [agentAgents.owner, agentAgents.name], set: { instruction, updated: now } })
          .run();
        return { name: n, instruction, address: ctx.mail.address(ctx.account.username, n) };
      },
    }),
    list: read({
      description: "Your agents, `default` first, each with its instruction and the mail address that reaches it.",
      args: T.Object({}),
      access: "account",
      run: async (_a, ctx) => (await listAgents(ctx.db, ctx.account.id)).map((a) => ({ name: a.name, instruction: a.instruction, address: ctx.mail.address(ctx.account.username, a.name) })),
    }),
    delete: write({
      description: "Removes a named agent; `default` returns to its built-in instruction. Its past conversations stay in recall.",
      args: T.Object({ name: Name }),
      access: "account",
      destructive: true,
      async run({ name }, ctx) {
        const n = agentName(name, "name");
        const gone = await ctx.db.delete(agentAgents).where(and(eq(agentAgents.owner, ctx.account.id), eq(agentAgents.name, n))).returning().all();
        if (!gone.length && n !== DEFAULT_AGENT) throw notFound(`you have no agent named "${n}"`);
        return { deleted: n };
      },
    }),
  },
  routes: [
    { method: "GET", path: "/agent", run: (req, ctx) => agentPage(req, ctx as AgentCtx) },
    { method: "GET", path: "/agent/page.js", run: () => pageScript() },
    { method: "POST", path: "/agent/send", run: (req, ctx) => sendRoute(req, ctx as AgentCtx) },
  ],
  start(ctx) {
    removers.set(ctx.config, ctx.mail.onTagged((m) => answerMail(m, ctx as AgentCtx)));
    startWorker(ctx as AgentCtx);
  },
  async stop(ctx) {
    removers.get(ctx.config)?.();
    await stopWorker(ctx as AgentCtx);
  },
});
