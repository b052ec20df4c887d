// one store: the Files screen's folders in a browser; making, moving and deleting folders over WebDAV run on both stores in test/files/dav.test.ts
// The Files screen's folders in Chromium, as a person uses them: a folder
// made, a file uploaded into it, renamed (asked before taking a name already
// there), dragged onto a breadcrumb to move it and the move undone; a file
// moved with the keyboard through Move…; a folder moved into another with what
// it holds, then deleted and brought back whole with Undo; an empty folder
// deleted and brought back with Undo; a folder dragged onto another and back,
// and moved from the keyboard alone;
// a folder made on a phone appearing without a reload. Axe in light and dark
// at a laptop's and a phone's width (screenshots in test/artifacts/views, or $HEARTH_SHOTS).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { signUp, type Signed } from "../auth/people.ts";
import { chromiumPresent, everyLook, launchChromium, sawToast } from "../browser.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { signedIn, type SignedInOptions } from "./signed-in.ts";

const SHOTS = process.env.HEARTH_SHOTS ?? join(import.meta.dir, "..", "artifacts", "views");
const ENV = { HEARTH_SIGNUP: "open", HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" };
const store = () => (process.env.HEARTH_TEST_DB === "pg" ? "pg" : "sqlite");

let h: Hearth;
let browser: Browser;
let erin: Signed;
let token: string;

interface Listed {
  id: string;
  name: string;
  folder: string;
  url: string;
}

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

const open = (o: SignedInOptions = {}) => signedIn(browser, h.url, erin, { serviceWorkers: "block", ...o });

const files = async (): Promise<Listed[]> => (await h.call("files/list", {}, { token })).body.result;
const where = async () => (await files()).map((f) => `${f.folder}/${f.name}`).sort();
/** Reads until what is read holds (the screen's write may still be on its way): a condition waited on, never a fixed time. */
async function eventually<T>(read: () => Promise<T>, holds: (v: T) => unknown): Promise<T> {
  for (let i = 0; ; i++) {
    const v = await read();
    if (holds(v)) return v;
    if (i >= 2400) throw new Error(`never held; last read: ${JSON.stringify(v)}`);
    await Bun.sleep(50);
  }
}
const row = (page: Page, name: string) => page.locator(".files-list button.item", { hasText: name });
const crumb = (page: Page, name: string) => page.getByRole("navigation", { name: "Folder" }).getByRole("button", { name, exact: true });

test.skipIf(!chromiumPresent)("a folder is made, a file uploaded into it, renamed after asking about a name taken, dragged out onto a breadcrumb and the move undone", async () => {
  const { context, page, problems } = await open();
  await page.goto(`${h.url}/my/files`);
  await page.getByRole("button", { name: "New folder" }).click();
  await page.getByLabel("New folder in Files").fill("Garden");
  await page.getByRole("button", { name: "Make folder" }).click();
  await sawToast(page, "Made the folder “Garden”");
  await row(page, "Garden").click();
  await page.waitForURL((u) => u.searchParams.get("folder") === "Garden");
  await page.getByText("This folder is empty").waitFor();
  await page.setInputFiles("input[type=file]", [
    { name: "beds.txt", mimeType: "text/plain", buffer: Buffer.from("raised beds") },
    { name: "seeds.txt", mimeType: "text/plain", buffer: Buffer.from("broad beans") },
  ]);
  await sawToast(page, "Uploaded “seeds.txt”");
  expect(await where()).toEqual(["Garden/beds.txt", "Garden/seeds.txt"]);
  const seeds = (await files()).find((f) => f.name === "seeds.txt")!;

  await row(page, "seeds.txt").click();
  await page.getByRole("button", { name: "Rename", exact: true }).click();
  await page.getByLabel("New name for “seeds.txt”").fill("beds.txt");
  await page.getByLabel("New name for “seeds.txt”").press("Enter");
  const asked = page.getByRole("dialog", { name: "Replace “beds.txt”?" });
  await asked.waitFor();
  await asked.getByRole("button", { name: "Cancel" }).click();
  await page.getByText("“beds.txt” is taken there: choose another name.").waitFor();
  expect(await where()).toEqual(["Garden/beds.txt", "Garden/seeds.txt"]);
  await page.getByLabel("New name for “seeds.txt”").fill("seeds 2025.txt");
  await page.locator("form.name-form").getByRole("button", { name: "Rename" }).click();
  await sawToast(page, "Renamed “seeds.txt” to “seeds 2025.txt”");
  await page.getByRole("heading", { name: "seeds 2025.txt" }).waitFor();
  // Renamed, it is the same file: same id, same address, same content.
  const renamed = (await files()).find((f) => f.id === seeds.id)!;
  expect([renamed.name, renamed.folder, renamed.url]).toEqual(["seeds 2025.txt", "Garden", seeds.url]);
  expect(await (await fetch(seeds.url, { headers: { cookie: erin.cookie } })).text()).toBe("broad beans");

  await row(page, "seeds 2025.txt").dragTo(crumb(page, "Files"));
  await sawToast(page, "Moved “seeds 2025.txt” to Files");
  await eventually(where, (w) => w.join() === ["/seeds 2025.txt", "Garden/beds.txt"].join());
  await page.locator(".toast", { hasText: "Moved “seeds 2025.txt” to Files" }).getByRole("button", { name: "Undo" }).click();
  await eventually(where, (w) => w.join() === ["Garden/beds.txt", "Garden/seeds 2025.txt"].join());
  await row(page, "seeds 2025.txt").waitFor();
  expect(problems).toEqual([]);
  await context.close();
});

test.skipIf(!chromiumPresent)("a file moved with the keyboard through Move…; a folder moved into another with its files, then deleted; an empty one deleted and brought back", async () => {
  await h.call("files/put", { name: "shed.md", content: "# Shed" }, { token, method: "POST" });
  const { context, page, problems } = await open();
  await page.goto(`${h.url}/my/files`);
  await page.getByRole("button", { name: "New folder" }).click();
  await page.getByLabel("New folder in Files").fill("Archive");
  await page.keyboard.press("Enter");
  await row(page, "Archive").waitFor();
  // The file, moved into Garden from the keyboard alone.
  await row(page, "shed.md").focus();
  await page.keyboard.press("Enter");
  await page.getByRole("heading", { name: "shed.md" }).waitFor();
  await page.getByRole("button", { name: "Move…" }).focus();
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("dialog", { name: "Move “shed.md” to…" });
  await dialog.getByRole("button", { name: "Garden" }).focus();
  await page.keyboard.press("Enter");
  await dialog.getByRole("button", { name: "Move to “Garden”" }).focus();
  await page.keyboard.press("Enter");
  await sawToast(page, "Moved “shed.md” to “Garden”");
  await eventually(where, (w) => w.includes("Garden/shed.md"));

  // Garden, with its three files, into Archive: the screen follows it.
  await row(page, "Garden").click();
  await page.waitForURL((u) => u.searchParams.get("folder") === "Garden");
  await page.getByRole("button", { name: /^Move folder/ }).click();
  const moving = page.getByRole("dialog", { name: "Move “Garden” to…" });
  await moving.getByRole("button", { name: "Files", exact: true }).click();
  // Garden cannot go inside itself: it is not offered.
  await moving.getByRole("button", { name: "Archive" }).click();
  await moving.getByRole("button", { name: "Move to “Archive”" }).click();
  await page.waitForURL((u) => u.searchParams.get("folder") === "Archive/Garden");
  await sawToast(page, "Moved “Garden” to “Archive”");
  expect(await where()).toEqual(["Archive/Garden/beds.txt", "Archive/Garden/seeds 2025.txt", "Archive/Garden/shed.md"]);
  await row(page, "shed.md").waitFor();

  // Garden, with its files and a folder in it, deleted without a question; Undo brings all of it back, byte for byte.
  const bulbs = await fetch(`${h.url}/files/dav/Archive/Garden/Bulbs/`, { method: "MKCOL", headers: { authorization: `Basic ${btoa(`erin:${token}`)}` } });
  expect(bulbs.status).toBe(201);
  await row(page, "Bulbs").waitFor();
  await page.getByRole("button", { name: "Delete folder" }).click();
  await sawToast(page, "Deleted “Garden” and the 3 files in it");
  expect(await page.getByRole("dialog").count()).toBe(0);
  await page.waitForURL((u) => u.searchParams.get("folder") === "Archive");
  await eventually(where, (w) => w.length === 0);
  await page.locator(".toast", { hasText: "Deleted “Garden”" }).getByRole("button", { name: "Undo" }).click();
  await eventually(where, (w) => w.join() === ["Archive/Garden/beds.txt", "Archive/Garden/seeds 2025.txt", "Archive/Garden/shed.md"].join());
  const back = await files();
  expect(await (await fetch(back.find((f) => f.name === "seeds 2025.txt")!.url, { headers: { cookie: erin.cookie } })).text()).toBe("broad beans");
  expect(await (await fetch(back.find((f) => f.name === "shed.md")!.url, { headers: { cookie: erin.cookie } })).text()).toBe("# Shed");
  expect((await fetch(`${h.url}/files/dav/Archive/Garden/Bulbs/`, { method: "PROPFIND", headers: { depth: "0", authorization: `Basic ${btoa(`erin:${token}`)}` } })).status).toBe(207);
  await row(page, "Garden").click();
  await row(page, "Bulbs").waitFor();
  await row(page, "shed.md").waitFor();

  // Deleted again, and left deleted.
  await page.getByRole("button", { name: "Delete folder" }).click();
  await page.waitForURL((u) => u.searchParams.get("folder") === "Archive");
  await eventually(where, (w) => w.length === 0);

  // Archive is empty now: it goes without a question, and Undo brings it back.
  await crumb(page, "Archive").waitFor();
  await page.getByRole("button", { name: "Delete folder" }).click();
  await sawToast(page, "Deleted “Archive”");
  await page.waitForURL((u) => !u.searchParams.has("folder"));
  await page.locator(".toast", { hasText: "Deleted “Archive”" }).getByRole("button", { name: "Undo" }).click();
  await row(page, "Archive").waitFor();
  expect(problems).toEqual([]);
  await context.close();
});

test.skipIf(!chromiumPresent)("of two files of one name that files/put stored, the older cannot be renamed, moved or dragged: the drive would move the newer", async () => {
  const older = (await h.call("files/put", { name: "twice.txt", content: "first" }, { token, method: "POST" })).body.result;
  const newer = (await h.call("files/put", { name: "twice.txt", content: "second" }, { token, method: "POST" })).body.result;
  const { context, page, problems } = await open();
  await page.goto(`${h.url}/my/files?open=${older.id}`);
  await page.getByText("A newer file of the same name is in this folder").waitFor();
  expect(await page.getByRole("button", { name: "Rename", exact: true }).isDisabled()).toBe(true);
  expect(await page.getByRole("button", { name: "Move…" }).isDisabled()).toBe(true);
  await page.locator(`.files-list button.item[aria-current=true]`).dragTo(row(page, "Archive"));
  await sawToast(page, "Not moved: a newer “twice.txt” is beside it");
  expect((await files()).filter((f) => f.name === "twice.txt").map((f) => f.folder)).toEqual(["", ""]);
  // The newer one moves, and only it.
  await page.goto(`${h.url}/my/files?open=${newer.id}`);
  await page.locator(`.files-list button.item[aria-current=true]`).dragTo(row(page, "Archive"));
  await sawToast(page, "Moved “twice.txt” to “Archive”");
  const now = await files();
  expect([now.find((f) => f.id === newer.id)?.folder, now.find((f) => f.id === older.id)?.folder]).toEqual(["Archive", ""]);
  expect(problems).toEqual([]);
  await context.close();
});

test.skipIf(!chromiumPresent)("a folder made on a phone over the drive appears on the open screen without a reload", async () => {
  const { context, page, problems } = await open();
  await page.goto(`${h.url}/my/files`);
  await row(page, "Archive").waitFor();
  const made = await fetch(`${h.url}/files/dav/Holiday%20photos/`, { method: "MKCOL", headers: { authorization: `Basic ${btoa(`erin:${token}`)}` } });
  expect(made.status).toBe(201);
  await row(page, "Holiday photos").waitFor();
  expect(problems).toEqual([]);
  await context.close();
});

test.skipIf(!chromiumPresent)("a folder is dragged onto another with what it holds and the move undone; then moved from the keyboard alone", async () => {
  const dav = (path: string, init: RequestInit = {}) => fetch(`${h.url}/files/dav/${path}`, { ...init, headers: { authorization: `Basic ${btoa(`erin:${token}`)}`, ...init.headers } });
  expect((await dav("Pots/", { method: "MKCOL" })).status).toBe(201);
  expect((await dav("Sheds/", { method: "MKCOL" })).status).toBe(201);
  expect((await dav("Pots/terracotta.txt", { method: "PUT", body: "six of them" })).status).toBe(201);
  const pot = (await files()).find((f) => f.name === "terracotta.txt")!;
  const { context, page, problems } = await open();
  await page.goto(`${h.url}/my/files`);
  await row(page, "Sheds").waitFor();

  await row(page, "Pots").dragTo(row(page, "Sheds"));
  await sawToast(page, "Moved “Pots” to “Sheds”");
  await eventually(where, (w) => w.includes("Sheds/Pots/terracotta.txt"));
  // Moved, the file is the same one; the screen stays where it was, the folder gone from it.
  expect((await files()).find((f) => f.id === pot.id)?.folder).toBe("Sheds/Pots");
  expect(new URL(page.url()).searchParams.has("folder")).toBe(false);
  await row(page, "Pots").waitFor({ state: "detached" });
  await page.locator(".toast", { hasText: "Moved “Pots” to “Sheds”" }).getByRole("button", { name: "Undo" }).click();
  await eventually(where, (w) => w.includes("Pots/terracotta.txt"));
  await row(page, "Pots").waitFor();

  // The same move from the keyboard: open the folder, Move folder…, choose, confirm.
  await row(page, "Pots").focus();
  await page.keyboard.press("Enter");
  await page.waitForURL((u) => u.searchParams.get("folder") === "Pots");
  await page.getByRole("button", { name: /^Move folder/ }).focus();
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("dialog", { name: "Move “Pots” to…" });
  await dialog.getByRole("button", { name: "Sheds" }).focus();
  await page.keyboard.press("Enter");
  await dialog.getByRole("button", { name: "Move to “Sheds”" }).focus();
  await page.keyboard.press("Enter");
  await page.waitForURL((u) => u.searchParams.get("folder") === "Sheds/Pots");
  await sawToast(page, "Moved “Pots” to “Sheds”");
  expect((await files()).find((f) => f.id === pot.id)?.folder).toBe("Sheds/Pots");
  expect(problems).toEqual([]);
  await context.close();
});

test.skipIf(!chromiumPresent)("the Files screen's folders pass axe in light and dark at 1280 and 390 px; screenshots for a look", async () => {
  await fetch(`${h.url}/files/dav/Holiday%20photos/Beach/`, { method: "MKCOL", headers: { authorization: `Basic ${btoa(`erin:${token}`)}` } });
  for (const [name, content] of [["sunset.txt", "orange"], ["tides.md", "# Tides\n\nLow at *noon*."]]) {
    const put = await fetch(`${h.url}/files/dav/Holiday%20photos/${name}`, { method: "PUT", headers: { authorization: `Basic ${btoa(`erin:${token}`)}` }, body: content });
    expect(put.status).toBe(201);
  }
  expect((await fetch(`${h.url}/files/dav/Holiday%20photos/Beach/shells.txt`, { method: "PUT", headers: { authorization: `Basic ${btoa(`erin:${token}`)}` }, body: "three" })).status).toBe(201);
  const tides = (await files()).find((f) => f.name === "tides.md")!;
  const { context, page } = await open({ bypassCSP: true });
  const found = await everyLook(
    page,
    h.url,
    [
      { name: "folder", path: `/my/files?folder=${encodeURIComponent("Holiday photos")}`, ready: (p) => row(p, "Beach").waitFor() },
      { name: "folder-file", path: `/my/files?folder=${encodeURIComponent("Holiday photos")}&open=${tides.id}`, ready: (p) => p.locator(".file-preview em").waitFor() },
      {
        name: "rename",
        path: `/my/files?folder=${encodeURIComponent("Holiday photos")}&open=${tides.id}`,
        ready: async (p) => {
          await p.getByRole("button", { name: "Rename", exact: true }).click();
          await p.getByLabel("New name for “tides.md”").waitFor();
        },
      },
      {
        name: "move",
        path: `/my/files?folder=${encodeURIComponent("Holiday photos")}&open=${tides.id}`,
        ready: async (p) => {
          await p.getByRole("button", { name: "Move…" }).click();
          await p.getByRole("dialog").getByRole("button", { name: "Beach" }).waitFor();
        },
      },
      {
        // A folder holding a file, deleted: the notice with its Undo.
        name: "folder-deleted",
        path: `/my/files?folder=${encodeURIComponent("Holiday photos/Beach")}`,
        ready: async (p) => {
          await p.getByRole("button", { name: "Delete folder" }).click();
          await p.locator(".toast", { hasText: "Deleted “Beach” and the 1 file in it" }).getByRole("button", { name: "Undo" }).waitFor();
        },
      },
    ],
    { shots: SHOTS, suffix: `-${store()}` },
  );
  await context.close();
  expect(found).toEqual({});
});
