// `hearth/dav`: what a plugin offering its records to calendar and contacts
// apps (`dav` in its manifest) writes them with: iCalendar and vCard text,
// patches that keep what a client sent, and the WebDAV XML around them.
export { DavPrecondition, type DavCollection, type DavRecord } from "../dav/collection.ts";
export { calendarComponent, calendarSeries, vcard, textOf, uidOf, ICAL } from "../dav/ical.ts";
export { ContentPatch, escapeText, fold, utcStamp } from "../dav/patch.ts";
export { NS, child, children, errorXml, parseXml, serialize, type El } from "../dav/xml.ts";
export { BASIC_CHALLENGE } from "../http/identify.ts";
