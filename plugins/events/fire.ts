// What happens when an event fires. The owner gets the reminder by mail, and
// a prompt runs through the agent with its answer mailed too. Each step is
// taken only once the instance offers the method it needs; until then the
// firing's record says what would have been sent and why it was not. A
// firing taken over after its reminder was mailed (its first write) runs only
// the prompt; its answer may then be asked and mailed again if the instance
// taken over from had got that far.
import { eq } from "drizzle-orm";
import { scopesFromText, asHearthError, type Ctx, formatTime, type Firing } from "hearth";
import { eventOffsetAt } from "./zone.ts";
import { events } from "./schema.ts";

/** Methods that run a prompt through the agent, in order of preference; each takes { prompt }. */
export const AGENT_METHODS = ["agent/ask", "agent/run"];

interface Message {
  to: string;
  subject: string;
  body: string;
}

/** Sends of one message a firing makes when the answer says to send it again (a database busy a moment, a limit). */
const SEND_TRIES = 5;

async function send(f: Firing, ctx: Ctx, m: Message) {
  if (!f.offers("mail/send")) return { ...m, sent: false, reason: "mail not configured: this instance has no mail service (mail/send)" };
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await ctx.call("mail", "send", { ...m });
      return { ...m, sent: true, result };
    } catch (e) {
      const he = asHearthError(e);
      // A refusal that says nothing was sent and to send again is sent again, a little later each time, so a
      // moment's contention (instances taking turns at one SQLite file) does not lose the reminder.
      if (he.retry && attempt < SEND_TRIES) {
        await Bun.sleep(100 * 2 ** attempt);
        continue;
      }
      return { ...m, sent: false, reason: he.message, status: he.status };
    }
  }
}

function answerText(a: unknown): string {
  if (typeof a === "string") return a;
  const o = a as Record<string, unknown> | null;
  for (const k of ["answer", "text", "content", "reply"]) if (o && typeof o[k] === "string") return o[k] as string;
  return JSON.stringify(a);
}

/** What a prompt runs with: the event maker's scopes, never the mail the firing holds only to deliver the reminder. */
function promptScopes(kept: string | null, firing: "*" | string[]): "*" | string[] {
  if (kept !== null) return scopesFromText(kept);
  return firing === "*" ? "*" : firing.filter((s) => s !== "mail");
}

export async function fireEvent(f: Firing, ctx: Ctx) {
  const ev = await ctx.db.select().from(events).where(eq(events.id, f.ref)).get();
  if (!ev) return { skipped: "the event was deleted before it fired" };
  const owner = ctx.account;
  const at = formatTime(f.due.getTime(), eventOffsetAt(ev, f.due.getTime()));
  // A title may hold line breaks; a subject line may not.
  const title = ev.title.replace(/\s*[\r\n]+\s*/g, " ");
  const lines = [ev.title, `When: ${at} for ${ev.minutes} minutes${ev.repeat ? `, repeating ${ev.repeat}` : ""}`];
  if (ev.note) lines.push("", ev.note);
  const out: Record<string, unknown> = { at, late_ms: f.late };
  const reminder = { to: owner.username, subject: `Reminder: ${title}`, body: lines.join("\n") };
  // Taken over from an instance that stalled or died after a write of this firing committed: the reminder, its first
  // write, went then, so only the prompt, which that instance may not have finished, is run here.
  out.reminder = f.acted && f.offers("mail/send") ? { ...reminder, sent: false, reason: "mailed by the run of this firing this one took over" } : await send(f, ctx, reminder);
  if (ev.prompt) {
    const answerMail = { to: owner.username, subject: `${title}: the answer` };
    const agent = AGENT_METHODS.find((p) => f.offers(p));
    if (!agent) {
      out.prompt = { prompt: ev.prompt, ran: false, reason: `agent not configured: this instance has no agent service (${AGENT_METHODS[0]})`, would_mail: answerMail };
    } else {
      const [service, method] = agent.split("/");
      try {
        const answer = answerText(await ctx.call(service, method, { prompt: ev.prompt }, { scopes: promptScopes(ev.scopes, ctx.caller.scopes) }));
        out.prompt = { prompt: ev.prompt, ran: true, via: agent, answer, mail: await send(f, ctx, { ...answerMail, body: answer }) };
      } catch (e) {
        const he = asHearthError(e);
        out.prompt = { prompt: ev.prompt, ran: false, via: agent, reason: he.message, status: he.status, would_mail: answerMail };
      }
    }
  }
  return out;
}
