// Named agents: every account has `default`; the owner makes others with an
// instruction, reachable by name on every client (mail to handle+name).
import { and, asc, eq } from "drizzle-orm";
import { TAG } from "hearth/mail";
import { invalid, notFound, type Db } from "hearth";
import { agentAgents } from "./schema.ts";

export const DEFAULT_AGENT = "default";
export const DEFAULT_INSTRUCTION = "Be brief and concrete. Use the tools to look things up or to act rather than guessing, and say what you did.";

export function agentName(raw: string | undefined, field = "agent"): string {
  const name = (raw ?? DEFAULT_AGENT).trim().toLowerCase();
  if (!TAG.test(name)) throw invalid(field, `an agent's name is 1-32 of a-z, 0-9, _ and - (so mail to handle+name reaches it); got "${raw}"`);
  return name;
}

export interface Agent {
  name: string;
  instruction: string;
  custom: boolean;
}

export async function findAgent(db: Db, owner: string, name: string): Promise<Agent | null> {
  const row = await db.select().from(agentAgents).where(and(eq(agentAgents.owner, owner), eq(agentAgents.name, name))).get();
  if (row) return { name, instruction: row.instruction, custom: true };
  if (name === DEFAULT_AGENT) return { name, instruction: DEFAULT_INSTRUCTION, custom: false };
  return null;
}

export async function agentOrThrow(db: Db, owner: string, name: string): Promise<Agent> {
  const a = await findAgent(db, owner, name);
  if (!a) throw notFound(`you have no agent named "${name}" (make one with agent/create)`);
  return a;
}

export async function listAgents(db: Db, owner: string): Promise<Agent[]> {
  const rows = await db.select().from(agentAgents).where(eq(agentAgents.owner, owner)).orderBy(asc(agentAgents.name)).all();
  const out = rows.map((r) => ({ name: r.name, instruction: r.instruction, custom: true }));
  if (!out.some((a) => a.name === DEFAULT_AGENT)) out.unshift({ name: DEFAULT_AGENT, instruction: DEFAULT_INSTRUCTION, custom: false });
  return out;
}
