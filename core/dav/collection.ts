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
   * the text's UID, and, when the service knows it without reading it back,
   * the record as get() would now give it (saving the request that read).
   * `current` is the record at `id` as this request has just read it (by
   * get(), or from list()), so a change need not read it again.
   */
  put(text: string, id: string | null, ctx: Ctx, current?: DavRecord): Promise<{ id: string; uid: string; record?: DavRecord }>;
  remove(id: string, ctx: Ctx): Promise<void>;
}

/**
 * A refusal a DAV client understands: an HTTP status with a precondition
 * element (RFC 4918 section 16), naming where the conflicting resource is.
 */
export class DavPrecondition extends HearthError {
  constructor(
    status: 403 | 409 | 412 | 413,
    readonly element: { ns: "DAV:" | "urn:ietf:params:xml:ns:caldav" | "urn:ietf:params:xml:ns:carddav"; name: string },
    message: string,
    readonly conflictRef?: string,
    field?: string,
    headers?: Record<string, string>,
  ) {
    super(status === 403 ? "forbidden" : status === 413 ? "too_large" : "conflict", message, { field, headers });
    (this as { status: number }).status = status;
  }
}

const NS_CALDAV = "urn:ietf:params:xml:ns:caldav" as const;
const NS_CARDDAV = "urn:ietf:params:xml:ns:carddav" as const;

/**
 * A client's text the service refused, as the precondition RFC 4791 5.3.2.1
 * and RFC 6352 6.3.2.1 name (valid-calendar-data, valid-address-data), so a
 * calendar app shows why; the refusal's field leads its description.
 */
export function invalidData(e: HearthError, type: "calendar" | "addressbook"): DavPrecondition {
  const element = type === "calendar" ? { ns: NS_CALDAV, name: "valid-calendar-data" } : { ns: NS_CARDDAV, name: "valid-address-data" };
  const message = e.field && e.field !== "body" ? `${e.field}: ${e.message}` : e.message;
  return new DavPrecondition(403, element, message, undefined, e.field);
}

/** A body over the size a collection takes (RFC 4791 5.3.2.1, RFC 6352 6.3.2.1: max-resource-size). */
export function tooLargeFor(e: HearthError, type: "calendar" | "addressbook"): DavPrecondition {
  return new DavPrecondition(413, { ns: type === "calendar" ? NS_CALDAV : NS_CARDDAV, name: "max-resource-size" }, e.message, undefined, "body", e.headers);
}

export function davError(ctxMessage: string): never {
  throw new HearthError("invalid_argument", ctxMessage, { field: "body" });
}
