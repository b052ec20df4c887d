// Reading a client's iCalendar or vCard text with ical.js, for the services'
// collections: one component of the expected kind, or a 400 saying why not.
import ICAL from "ical.js";
import { HearthError } from "../errors.ts";
import { DavPrecondition } from "./collection.ts";

export { ICAL };

const bad = (message: string) => new HearthError("invalid_argument", message, { field: "body" });
/** A calendar holds one kind of component (RFC 4791 5.3.2.1: supported-calendar-component). */
const otherComponent = (name: string) =>
  new DavPrecondition(403, { ns: "urn:ietf:params:xml:ns:caldav", name: "supported-calendar-component" }, `this calendar holds ${name.toUpperCase()}s: the calendar object holds none`, undefined, "body");

function parse(text: string, what: string): InstanceType<typeof ICAL.Component> {
  let parsed: unknown[];
  try {
    parsed = ICAL.parse(text) as unknown[];
  } catch (e) {
    throw bad(`the body is not ${what}: ${(e as Error).message}`);
  }
  // Several top-level components parse as a list of them: an object is exactly one.
  if (!Array.isArray(parsed) || typeof parsed[0] !== "string") throw bad(`the body must hold exactly one ${what === "a vCard" ? "VCARD" : "VCALENDAR"}`);
  return new ICAL.Component(parsed);
}

/** The one VEVENT or VTODO of a calendar object; changes to single occurrences (RECURRENCE-ID) are refused, since the service keeps whole series only. */
export function calendarComponent(text: string, name: "vevent" | "vtodo"): InstanceType<typeof ICAL.Component> {
  const cal = parse(text, "iCalendar");
  if (cal.name !== "vcalendar") throw bad(`the body must be a VCALENDAR (got ${cal.name.toUpperCase()})`);
  const comps = cal.getAllSubcomponents(name);
  if (comps.length === 0) throw otherComponent(name);
  if (comps.length > 1 || comps[0].hasProperty("recurrence-id"))
    throw bad(`a change to one occurrence of a repeating ${name === "vevent" ? "event" : "task"} cannot be kept: change the whole series`);
  return comps[0];
}

/**
 * A calendar object holding one series: the component without RECURRENCE-ID
 * and the overrides of its single occurrences (RFC 4791 4.1: one UID, all of
 * one kind), or a 400 saying why not.
 */
export function calendarSeries(text: string, name: "vevent" | "vtodo"): { cal: InstanceType<typeof ICAL.Component>; master: InstanceType<typeof ICAL.Component>; overrides: InstanceType<typeof ICAL.Component>[] } {
  const cal = parse(text, "iCalendar");
  if (cal.name !== "vcalendar") throw bad(`the body must be a VCALENDAR (got ${cal.name.toUpperCase()})`);
  const comps = cal.getAllSubcomponents(name);
  if (comps.length === 0) throw otherComponent(name);
  const masters = comps.filter((c) => !c.hasProperty("recurrence-id"));
  if (masters.length !== 1) throw bad(masters.length ? `the calendar object holds ${masters.length} ${name.toUpperCase()}s: one object is one series` : `the calendar object holds changes to single occurrences but not the series they belong to`);
  const uid = textOf(masters[0], "uid");
  if (comps.some((c) => textOf(c, "uid") !== uid)) throw bad("every component of one calendar object has the same UID");
  return { cal, master: masters[0], overrides: comps.filter((c) => c !== masters[0]) };
}

export function vcard(text: string): InstanceType<typeof ICAL.Component> {
  const card = parse(text, "a vCard");
  if (card.name !== "vcard") throw bad(`the body must be a VCARD (got ${card.name.toUpperCase()})`);
  return card;
}

/** A property's text, or "" when absent. */
export const textOf = (c: InstanceType<typeof ICAL.Component>, prop: string): string => {
  const v = c.getFirstPropertyValue(prop);
  return v === null || v === undefined ? "" : String(v);
};

/** The UID the client gave, or a new one. */
export const uidOf = (c: InstanceType<typeof ICAL.Component>) => textOf(c, "uid") || crypto.randomUUID();
