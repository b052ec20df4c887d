// one store: the Contacts screen; contacts, vCard import and export run on both stores in test/contacts
// The Contacts screen in Chromium, as a person uses it: a contact synced from
// an address book app with two emails, found by the search and edited (its
// second email kept, in the API and on the card the app syncs); a vCard file
// imported and the book exported; and axe in light and dark at a laptop's
// and a phone's width (screenshots in test/artifacts/views, or $HEARTH_SHOTS).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { signUp, type Signed } from "../auth/people.ts";
import { chromiumPresent, everyLook, launchChromium, sawToast } from "../browser.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { signedIn, WIDTHS, type SignedInOptions } from "./signed-in.ts";

const SHOTS = process.env.HEARTH_SHOTS ?? join(import.meta.dir, "..", "artifacts", "screens");
const ENV = { HEARTH_SIGNUP: "open", HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" };
const store = () => (process.env.HEARTH_TEST_DB === "pg" ? "pg" : "sqlite");

let h: Hearth;
let browser: Browser;
let erin: Signed;
let token: string;

beforeAll(async () => {
  if (!chromiumPresent) return;
  mkdirSync(SHOTS, { recursive: true });
  h = await startHearth({ env: ENV });
  erin = await signUp(h, "erin");
  token = await h.token("erin");
  browser = await launchChromium();
});
afterAll(async () => {
  if (!chromiumPresent) return;
  await browser?.close();
  await h?.stop();
});

// The app's worker is left out: the screens' own test covers it, and here each visit should reach the server.
const open = (o: SignedInOptions = {}) => signedIn(browser, h.url, erin, { serviceWorkers: "block", ...o });

const dav = (path: string, init: RequestInit = {}) =>
  fetch(`${h.url}/dav/addressbooks/erin/contacts/${path}`, { ...init, headers: { authorization: `Basic ${Buffer.from(`erin:${token}`).toString("base64")}`, ...init.headers } });

const anaCard = [
  "BEGIN:VCARD",
  "VERSION:3.0",
  "UID:ana-1",
  "FN:Ana Lima",
  "N:Lima;Ana;;;",
  "EMAIL;TYPE=INTERNET,HOME,pref:ana@home.example",
  "EMAIL;TYPE=INTERNET,WORK:ana@work.example",
  "TEL;TYPE=CELL:+44 20 7946 0958",
  "ORG:Lima & Sons",
  "END:VCARD",
  "",
].join("\r\n");

test.skipIf(!chromiumPresent)("a contact with two emails, synced from an app, is found, edited and saved with both emails kept", async () => {
  expect((await dav("ana.vcf", { method: "PUT", body: anaCard, headers: { "content-type": "text/vcard", "if-none-match": "*" } })).status).toBe(201);
  const { context, page, problems } = await open();
  await page.goto(`${h.url}/my/contacts`);
  await page.fill("#contact-search", "work.example");
  await page.keyboard.press("Enter");
  await page.waitForURL(/open=/);
  expect(await page.inputValue("#contact-email")).toBe("ana@home.example");
  expect(await page.inputValue("#contact-email-1")).toBe("ana@work.example");
  expect(await page.inputValue("#contact-email-1-type")).toBe("work");

  // A bad phone is refused next to its field, in the server's words; then a good one saves with Ctrl+S.
  await page.fill("#contact-phone", "call me");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await page.locator("#contact-phone-error", { hasText: "may hold digits" }).waitFor();
  expect(await page.getAttribute("#contact-phone", "aria-invalid")).toBe("true");
  await page.fill("#contact-phone", "+351 21 000 0000");
  // The second email changed, a third added as "other", the note written.
  await page.fill("#contact-email-1", "ana@newwork.example");
  await page.getByRole("button", { name: "Add email" }).click();
  await page.fill("#contact-email-2", "ana@club.example");
  await page.selectOption("#contact-email-2-type", "other");
  await page.fill("#contact-note", "Met at the conference.\nPrefers email.");
  await page.press("#contact-note", "Control+s");
  await page.locator(".save-status", { hasText: "Saved" }).waitFor();

  const [ana] = (await h.call("contacts/list", {}, { token })).body.result;
  expect(ana).toMatchObject({ name: "Ana Lima", email: "ana@home.example", phone: "+351 21 000 0000", note: "Met at the conference.\nPrefers email." });
  expect(ana.emails).toEqual(["ana@home.example", "ana@newwork.example", "ana@club.example"]);
  expect(ana.email_types).toEqual(["home", "work", "other"]);
  const card = await (await dav("ana.vcf")).text();
  // The card's own lines stay as the app wrote them; the changed ones alone are rewritten.
  expect(card).toContain("\r\nEMAIL;TYPE=INTERNET,HOME,pref:ana@home.example\r\n");
  expect(card).toContain("\r\nEMAIL;TYPE=INTERNET,WORK:ana@newwork.example\r\n");
  expect(card).toContain("\r\nEMAIL;TYPE=other:ana@club.example\r\n");
  expect(card).toContain("ORG:Lima & Sons");
  expect(card).toContain("+351 21 000 0000");
  // The name of a card with more than the API sets stays as the app wrote it.
  expect(await page.getAttribute("#contact-name", "readonly")).not.toBeNull();
  expect(problems).toEqual([]);
  await context.close();
});

test.skipIf(!chromiumPresent)("a contact is added, renamed, deleted and brought back with Undo; vCards are imported and exported", async () => {
  const { context, page, problems } = await open({ size: WIDTHS.phone });
  await page.goto(`${h.url}/my/contacts`);
  await page.locator(".search-list").waitFor();
  await page.keyboard.press("n");
  await page.fill("#contact-name", "Bo Chen");
  await page.fill("#contact-email", "bo@example.org");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await page.locator(".save-status", { hasText: "Saved" }).waitFor();
  await page.fill("#contact-name", "Bo Chen-Li");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await page.locator(".save-status", { hasText: "Saved" }).waitFor();
  let names = (await h.call("contacts/list", {}, { token })).body.result.map((c: { name: string }) => c.name);
  expect(names).toContain("Bo Chen-Li");
  expect(names).not.toContain("Bo Chen");

  await page.getByRole("button", { name: "Delete" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
  await page.locator(".toast", { hasText: "Deleted “Bo Chen-Li”" }).waitFor();
  expect((await h.call("contacts/find", { query: "Bo Chen" }, { token })).body.result).toEqual([]);
  await page.locator(".toast").getByRole("button", { name: "Undo" }).click();
  await page.waitForURL(/open=/);
  expect(await page.inputValue("#contact-email")).toBe("bo@example.org");

  // Import: two cards from a file (one folded line), then the whole book out as one .vcf.
  await page.goto(`${h.url}/my/contacts`);
  await page.setInputFiles('input[type=file]', {
    name: "friends.vcf",
    mimeType: "text/vcard",
    buffer: Buffer.from("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Cy Dune\r\nEMAIL:cy@example.org\r\nNOTE:long\r\n  note\r\nEND:VCARD\r\nBEGIN:VCARD\r\nVERSION:4.0\r\nN:Eto;Di;;;\r\nTEL;VALUE=uri:tel:+1-555-0100\r\nEND:VCARD\r\n"),
  });
  await sawToast(page, "Imported 2 contacts");
  const all = (await h.call("contacts/list", {}, { token })).body.result;
  expect(all.find((c: { name: string }) => c.name === "Cy Dune")).toMatchObject({ email: "cy@example.org", note: "long note" });
  expect(all.find((c: { name: string }) => c.name === "Di Eto")).toMatchObject({ phone: "+1-555-0100" });
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Export vCard" }).click()]);
  const out = readFileSync((await download.path())!, "utf8");
  expect(download.suggestedFilename()).toBe("contacts.vcf");
  for (const c of all) expect(out).toContain(`FN:${c.name}`);
  // Every email, with its kind.
  expect(out).toContain("EMAIL;TYPE=INTERNET,WORK:ana@newwork.example");
  expect(out).toContain("EMAIL;TYPE=INTERNET,OTHER:ana@club.example");
  expect(problems).toEqual([]);
  await context.close();
});

test.skipIf(!chromiumPresent)("the Contacts screen passes axe in light and dark at 1280 and 390 px; screenshots for a look", async () => {
  const [ana] = (await h.call("contacts/find", { query: "Ana" }, { token })).body.result;
  const found: Record<string, unknown> = {};
  const pages: [string, string, (p: Page) => Promise<unknown>][] = [
    ["contacts-list", "/my/contacts", (p) => p.locator(".search-list .item").first().waitFor()],
    ["contact", `/my/contacts?open=${ana.id}`, (p) => p.locator("#contact-email").waitFor()],
    ["contact-new", "/my/contacts?new=1", (p) => p.locator("#contact-name").waitFor()],
  ];
  const { context, page } = await open({ bypassCSP: true });
  Object.assign(found, await everyLook(page, h.url, pages.map(([name, path, ready]) => ({ name, path, ready })), { shots: SHOTS, suffix: `-${store()}` }));
  await context.close();
  expect(found).toEqual({});
});
