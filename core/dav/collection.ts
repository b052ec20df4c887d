// What a service declares to be synced by calendar and contacts apps: one
// collection per account, whose records the service lists, renders as
// iCalendar or vCard, and changes from a client's text. Changes go through
// ctx.call, the same dispatch as the API, so a phone's edit is validated,
// recorded and scheduled exactly like an API call.
import { HearthError } from "../errors.ts";
import type { Ctx } from "../plugin.ts";

export interface DavRecord {
  id: string;
  /** What the service keeps of the record: a change here is a change the client must fetch. */
  data: unknown;
}

export interface DavCollection {
  /** "calendar" (CalDAV, iCalendar objects) or "addressbook" (CardDAV, vCards). */
  type: "calendar" | "addressbook";
  /** For a calendar, the one component it holds. */
  component?: "VEVENT" | "VTODO";
  displayName: string;
  /** Every record of the caller's, read from the service's own tables (awaited: the store may answer over the network). */
  list(ctx: Ctx): Promise<DavRecord[]>;
  /**
   * One record of the caller's by id, or undefined: what a request for one
   * resource reads, at a cost that does not grow with the collection (without
   * it, the record is looked for in list()).
   */
  get?(id: string, ctx: Ctx): Promise<DavRecord | undefined>;
  /**
   * A record as iCalendar or vCard text, keeping the client's UID (and vCard
   * version, when it sent one). With `raw`, the text a client last sent for
   * it: the record changed since (over the API, by the agent), and the answer
   * is that text with the properties the service keeps brought up to the
   * record, every other line as the client wrote it.
   */
  render(record: DavRecord, o: { uid: string; version?: string; raw?: string }): string;
  /**
   * Creates (id null) or changes the record from a client's text, through
   * dispatch; returns the record's id (a changed record keeps its own) and
   * the text's UID.
   */
  put(text: string, id: string | null, ctx: Ctx): Promise<{ id: string; uid: string }>;
  remove(id: string, ctx: Ctx): Promise<void>;
}

/**
 * A refusal a DAV client understands: an HTTP status with a precondition
 * element (RFC 4918 section 16), naming where the conflicting resource is.
 */
export class DavPrecondition extends HearthError {
  constructor(
    status: 403 | 409 | 412,
    readonly element: { ns: "DAV:" | "urn:ietf:params:xml:ns:caldav" | "urn:ietf:params:xml:ns:carddav"; name: string },
    message: string,
    readonly conflictRef?: string,
    field?: string,
  ) {
    super(status === 403 ? "forbidden" : "conflict", message, { field });
    (this as { status: number }).status = status;
  }
}

export function davError(ctxMessage: string): never {
  throw new HearthError("invalid_argument", ctxMessage, { field: "body" });
}
