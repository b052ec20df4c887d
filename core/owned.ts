// Who may see and who may change a record that belongs to an account. Every
// service with owned records asks here, so the rule (and what a refusal
// reveals) is the same everywhere: a record the caller may not see is "not
// found", never "forbidden", so its existence does not leak; a record the
// caller may see but does not own is "forbidden" to change.
import { eq, or, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { forbidden, notFound, unauthenticated } from "./errors.ts";
import type { Caller } from "./plugin.ts";

export interface Ownership<R> {
  /** The account a new record belongs to: always the caller, never an argument. */
  owner(caller: Caller): string;
  /** SQL condition: rows the caller owns. */
  mine(caller: Caller): SQL;
  /** SQL condition: rows the caller owns plus public ones; strangers see only public ones. */
  visible(caller: Caller): SQL;
  /** Whether the caller may see this record. */
  canSee(row: R, caller: Caller): boolean;
  /** The record if the caller may see it; 404 otherwise. */
  see(row: R | undefined, caller: Caller, ref: string): R;
  /** The record if the caller owns it; 404 when they cannot see it; someone else's public one as `othersPublic` says (403 by default). */
  own(row: R | undefined, caller: Caller, ref: string): R;
}

export function ownership<R>(spec: {
  /** What the record is called in messages ("document", "post"). */
  what: string;
  ownerColumn: SQLiteColumn;
  ownerOf: (row: R) => string;
  /** Omitted: records are never public. */
  publicWhere?: SQL;
  isPublic?: (row: R) => boolean;
  /**
   * How a change to someone else's public record is refused: "forbidden"
   * says so (blog posts, whose authors are shown), "not_found" treats it
   * like any record of theirs (documents, whose owners are not shown).
   */
  othersPublic?: "forbidden" | "not_found";
}): Ownership<R> {
  const accountOf = (caller: Caller) => {
    if (!caller.account) throw unauthenticated(`this needs an account: send "Authorization: Bearer <token>"`);
    return caller.account.id;
  };
  const isPublic = (row: R) => spec.isPublic?.(row) ?? false;
  const nowhere = sql`0`;
  const o: Ownership<R> = {
    owner: accountOf,
    mine: (caller) => eq(spec.ownerColumn, accountOf(caller)),
    visible(caller) {
      const pub = spec.publicWhere ?? nowhere;
      return caller.account ? or(eq(spec.ownerColumn, caller.account.id), pub)! : pub;
    },
    canSee: (row, caller) => isPublic(row) || (!!caller.account && spec.ownerOf(row) === caller.account.id),
    see(row, caller, ref) {
      if (!row || !o.canSee(row, caller)) throw notFound(`no ${spec.what} ${JSON.stringify(ref)}`);
      return row;
    },
    own(row, caller, ref) {
      const me = accountOf(caller);
      const seen = o.see(row, caller, ref);
      if (spec.ownerOf(seen) !== me && spec.othersPublic === "not_found") throw notFound(`no ${spec.what} ${JSON.stringify(ref)}`);
      if (spec.ownerOf(seen) !== me) throw forbidden(`that ${spec.what} belongs to someone else; only its author may change it`);
      return seen;
    },
  };
  return o;
}
