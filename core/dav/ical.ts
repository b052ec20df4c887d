// Reading a client's iCalendar or vCard text with ical.js, for the services'
// collections: one component of the expected kind, or a 400 saying why not.
import ICAL from "ical.js";
import { HearthError } from "../errors.ts";

export { ICAL };

const bad = (message: string) => new HearthError("invalid_argument", message, { field: "body" });

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
  if (comps.length === 0) throw bad(`the calendar object holds no ${name.toUpperCase()}`);
  if (comps.length > 1 || comps[0].hasProperty("recurrence-id"))
    throw bad(`a change to one occurrence of a repeating ${name === "vevent" ? "event" : "task"} cannot be kept: change the whole series`);
  return comps[0];
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
