// Token usage per model request: written as each request ends, read by the
// `hearth ai usage` command.
import { and, gte, sql } from "drizzle-orm";
import type { Runtime } from "../runtime.ts";
import { aiUsage } from "./schema.ts";

export type UsageRow = typeof aiUsage.$inferInsert;

/**
 * Records one request. Inside a write call the row joins its transaction
 * (an undone call leaves no row, like everything else it wrote); otherwise
 * it is one short write of its own.
 */
export async function recordUsage(rt: Runtime, row: UsageRow): Promise<void> {
  try {
    if (rt.store.inWrite()) await rt.store.wdb.insert(aiUsage).values(row).run();
    else await rt.store.write(() => rt.store.wdb.insert(aiUsage).values(row).run());
  } catch (e) {
    // Bookkeeping must never turn a model's good answer into a failure.
    rt.log.warn("ai usage not recorded", { error: String(e), request_id: row.requestId });
  }
}

export interface UsageTotal {
  service: string;
  model: string;
  kind: string;
  requests: number;
  failed: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** Totals per service, model and kind since a time (ms since epoch). */
export function usageSince(rt: Runtime, since: number): Promise<UsageTotal[]> {
  return rt.store.rdb
    .select({
      service: aiUsage.service,
      model: aiUsage.model,
      kind: aiUsage.kind,
      requests: sql<number>`count(*)`,
      failed: sql<number>`sum(case when ${aiUsage.outcome} = 'ok' then 0 else 1 end)`,
      prompt_tokens: sql<number>`coalesce(sum(${aiUsage.promptTokens}), 0)`,
      completion_tokens: sql<number>`coalesce(sum(${aiUsage.completionTokens}), 0)`,
      total_tokens: sql<number>`coalesce(sum(${aiUsage.totalTokens}), 0)`,
    })
    .from(aiUsage)
    .where(and(gte(aiUsage.at, since)))
    .groupBy(aiUsage.service, aiUsage.model, aiUsage.kind)
    .orderBy(aiUsage.service, aiUsage.model)
    .all();
}
