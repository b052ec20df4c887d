// Client texts as the apps send them, kept with CRLF line ends as on the wire.

/** A weekly event with a reminder as Apple Calendar on macOS 14 writes it. */
export const appleEvent = [
  "BEGIN:VCALENDAR",
  "VERSION:2.0",
  "PRODID:-//Apple Inc.//macOS 14.6.1//EN",
  "CALSCALE:GREGORIAN",
  "BEGIN:VTIMEZONE",
  "TZID:Europe/London",
  "BEGIN:DAYLIGHT",
  "TZOFFSETFROM:+0000",
  "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU",
  "DTSTART:19810329T010000",
  "TZNAME:BST",
  "TZOFFSETTO:+0100",
  "END:DAYLIGHT",
  "BEGIN:STANDARD",
  "TZOFFSETFROM:+0100",
  "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU",
  "DTSTART:19961027T020000",
  "TZNAME:GMT",
  "TZOFFSETTO:+0000",
  "END:STANDARD",
  "END:VTIMEZONE",
  "BEGIN:VEVENT",
  "CREATED:20260228T101500Z",
  "DTEND;TZID=Europe/London:20260303T100000",
  "DTSTAMP:20260228T101512Z",
  "DTSTART;TZID=Europe/London:20260303T093000",
  "LAST-MODIFIED:20260228T101511Z",
  "LOCATION:Studio 2\\, Canal St",
  "RRULE:FREQ=WEEKLY;INTERVAL=1",
  "SEQUENCE:0",
  "SUMMARY:Pilates",
  "TRANSP:OPAQUE",
  "UID:5C1B8A2E-7F3D-4E0A-9B61-2A4F0E9C3D17",
  "X-APPLE-CREATOR-IDENTITY:com.apple.calendar",
  "X-APPLE-CREATOR-TEAM-IDENTITY:0000000000",
  "X-APPLE-TRAVEL-ADVISORY-BEHAVIOR:AUTOMATIC",
  "BEGIN:VALARM",
  "ACTION:DISPLAY",
  "DESCRIPTION:Reminder",
  "TRIGGER:-PT15M",
  "UID:0D7A3C51-1B4E-4F2A-8C6D-93E2B5A7F104",
  "X-APPLE-DEFAULT-ALARM:TRUE",
  "X-WR-ALARMUID:0D7A3C51-1B4E-4F2A-8C6D-93E2B5A7F104",
  "END:VALARM",
  "END:VEVENT",
  "END:VCALENDAR",
  "",
].join("\r\n");

/** A vCard 4.0 with an inline photo, as CardDAV clients send it. */
export const cardWithPhoto = [
  "BEGIN:VCARD",
  "VERSION:4.0",
  "PRODID:-//Sabre//Sabre VObject 4.5.4//EN",
  "UID:urn:uuid:4fbe8971-0bc3-424c-9c26-36c3e1eff6b1",
  "FN:Ana Lima",
  "N:Lima;Ana;;;",
  "EMAIL;TYPE=work:ana@example.org",
  "TEL;VALUE=uri;TYPE=cell:tel:+44-20-7946-0958",
  "PHOTO:data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "X-ABLABEL:friend",
  "REV:20260228T101500Z",
  "END:VCARD",
  "",
].join("\r\n");

export const card3 = (uid: string, name: string, email = "") =>
  ["BEGIN:VCARD", "VERSION:3.0", `UID:${uid}`, `FN:${name}`, `N:${name.split(" ").reverse().join(";")};;;`, ...(email ? [`EMAIL;TYPE=INTERNET:${email}`] : []), "END:VCARD", ""].join("\r\n");

export const vevent = (uid: string, summary: string, start: string, extra: string[] = []) =>
  ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Test//EN", "BEGIN:VEVENT", `UID:${uid}`, "DTSTAMP:20260301T000000Z", `DTSTART:${start}`, "DURATION:PT45M", `SUMMARY:${summary}`, ...extra, "END:VEVENT", "END:VCALENDAR", ""].join("\r\n");
