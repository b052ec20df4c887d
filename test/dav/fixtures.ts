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

/** A content line folded at 75 octets, as clients write long values. */
const folded = (line: string) => {
  const parts = [line.slice(0, 75)];
  for (let i = 75; i < line.length; i += 74) parts.push(` ${line.slice(i, i + 74)}`);
  return parts.join("\r\n");
};

/** About 150 KB of base64, the same every run. */
export const photoData = (() => {
  const bytes = new Uint8Array(112_000);
  let x = 7;
  for (let i = 0; i < bytes.length; i++) bytes[i] = x = (x * 1103515245 + 12345) & 0xff;
  return Buffer.from(bytes).toString("base64");
})();

/**
 * A full card as phone address books keep one: four emails (the second the
 * preferred one), three phones with types, an organisation, a birthday and a
 * large photo, in vCard 4.0 or 3.0.
 */
export function fullCard(version: "3.0" | "4.0", uid: string, name = "Ana Lima") {
  const four = version === "4.0";
  const [given, family] = name.split(" ");
  return [
    "BEGIN:VCARD",
    `VERSION:${version}`,
    "PRODID:-//Sabre//Sabre VObject 4.5.4//EN",
    `UID:${uid}`,
    `FN:${name}`,
    `N:${family};${given};;Dr.;`,
    "EMAIL;TYPE=work:ana@work.example",
    four ? "EMAIL;TYPE=home;PREF=1:ana@home.example" : "EMAIL;TYPE=INTERNET,HOME,pref:ana@home.example",
    "item1.EMAIL;TYPE=INTERNET:ana@club.example",
    "item1.X-ABLABEL:Club",
    "EMAIL;TYPE=other:ana.lima@old.example",
    four ? 'TEL;VALUE=uri;TYPE="cell,voice":tel:+44-20-7946-0958' : "TEL;TYPE=CELL,VOICE:+44 20 7946 0958",
    four ? "TEL;VALUE=uri;TYPE=work:tel:+44-20-7946-0000" : "TEL;TYPE=WORK:+44 20 7946 0000",
    four ? "TEL;VALUE=uri;TYPE=home:tel:+44-161-496-0123" : "TEL;TYPE=HOME:+44 161 496 0123",
    "ORG:Lima & Sons;Research",
    "TITLE:Chief of Things\\, Acting",
    four ? "BDAY:19850412" : "BDAY;VALUE=date:1985-04-12",
    "ADR;TYPE=home:;;1 Canal St;Manchester;;M1 3AB;UK",
    "CATEGORIES:friends,work",
    folded(four ? `PHOTO:data:image/jpeg;base64,${photoData}` : `PHOTO;ENCODING=b;TYPE=JPEG:${photoData}`),
    "X-SOCIALPROFILE;TYPE=mastodon:https://example.social/@ana",
    "NOTE:Met at the conference",
    "REV:20260228T101500Z",
    "END:VCARD",
    "",
  ].join("\r\n");
}

/** A task with a priority, a category, a start and an alarm, as Thunderbird and Tasks.org write them. */
export const fullTodo = (uid: string, status = "NEEDS-ACTION") =>
  [
    "BEGIN:VCALENDAR",
    "VERSION:2.0",
    "PRODID:-//Mozilla.org/NONSGML Mozilla Calendar V1.1//EN",
    "BEGIN:VTODO",
    "CREATED:20260301T080000Z",
    "LAST-MODIFIED:20260301T080000Z",
    "DTSTAMP:20260301T080000Z",
    `UID:${uid}`,
    "SUMMARY:File taxes",
    "PRIORITY:1",
    "CATEGORIES:Money",
    `STATUS:${status}`,
    "X-MOZ-GENERATION:3",
    "DTSTART:20260401T090000Z",
    "DUE:20260415T170000Z",
    "DESCRIPTION:Forms are in the drawer",
    "BEGIN:VALARM",
    "ACTION:DISPLAY",
    "TRIGGER;RELATED=END:-PT1H",
    "DESCRIPTION:Taxes due",
    "END:VALARM",
    "END:VTODO",
    "END:VCALENDAR",
    "",
  ].join("\r\n");

/** Logical content lines (folds kept as written) of a text, with the names given left out. */
export function linesBut(text: string, ...names: string[]): string[] {
  const gone = new Set(names.map((n) => n.toUpperCase()));
  return text
    .split(/\r\n(?![ \t])/)
    .filter((l) => !gone.has(l.split(/[;:]/)[0].replace(/^.*\./, "").toUpperCase()));
}
