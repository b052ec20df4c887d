// Entries read straight from the view audit_entries, as the activity log's
// reader gives them: a hash left null is that of the preview, which is then
// the arguments' canonical JSON (core/audit/read.ts).
export function withHashes<T extends { args: string; args_hash: string | null }>(rows: T[]): (T & { args_hash: string })[] {
  for (const r of rows) r.args_hash ??= Bun.SHA256.hash(r.args, "hex") as string;
  return rows as (T & { args_hash: string })[];
}
