// one store: the approvals page in a browser; tasks themselves run on both stores in test/policy/tasks.test.ts
// The owner answers a task's approval where they answer any other: on
// /approvals, in a real browser. The SDK's client polls its task meanwhile
// and gets the result once the owner clicks Approve; a task its client
// cancelled shows as withdrawn among the settled requests. The page passes
// axe in light and dark at a phone's and a desktop's width, with
// screenshots left in test/artifacts/tasks/.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { chromiumPresent, everyLook, launchChromium } from "../browser.ts";
import { mcpClient, PATIENT } from "../mcp/client.ts";
import { signedIn as contextOf, startHeld, type Held } from "./held.ts";

const ARTIFACTS = join(import.meta.dir, "..", "artifacts", "tasks");

let held: Held;
let h: Held["h"];
let browser: Browser;
let token: string;

beforeAll(async () => {
  if (!chromiumPresent) return;
  held = await startHeld({ approvalSeconds: 600 });
  h = held.h;
  token = await held.asking("Night assistant");
  browser = await launchChromium();
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await held?.stop();
});

const signedIn = async (): Promise<Page> => (await contextOf(browser, h.url, held.s.cookie, { bypassCSP: true })).newPage();

/** Opens /approvals until the request for `to` shows (the task's call makes it). */
async function openWhenAsked(page: Page, to: string) {
  for (;;) {
    await page.goto(`${h.url}/approvals`);
    if (await page.locator("section.ask", { hasText: to }).count()) return;
    await Bun.sleep(20);
  }
}

test.skipIf(!chromiumPresent)("the SDK client polls its task while the owner approves it on /approvals in Chromium; the mail goes once", async () => {
  const page = await signedIn();
  const c = await mcpClient(h.url, { token });
  const stream = c.client.experimental.tasks.callToolStream({ name: "mail_send", arguments: { to: "carol@example.com", subject: "Minutes", body: "Tuesday's minutes." } }, CallToolResultSchema, {
    ...PATIENT,
    task: { ttl: 3_600_000 },
  });
  const types: string[] = [];
  let result: any;
  for await (const m of stream) {
    types.push(m.type);
    if (m.type === "taskCreated") {
      await openWhenAsked(page, "carol@example.com");
      expect(await page.locator("section.ask").textContent()).toContain("mail/send for Night assistant");
      await page.getByRole("button", { name: "Approve mail/send for Night assistant" }).click();
      await page.waitForURL((u) => u.searchParams.get("done") === "approved");
    }
    if (m.type === "result") result = m.result;
    if (m.type === "error") throw m.error;
  }
  expect(types[0]).toBe("taskCreated");
  expect(types.at(-1)).toBe("result");
  expect(result.isError).toBeFalsy();
  expect((await held.relay.next()).to).toEqual(["carol@example.com"]);
  expect(await h.rows("SELECT delta FROM pay_ledger WHERE reason = 'charge' AND method = 'mail/send'")).toHaveLength(1);
  await c.close();
  await page.context().close();
});

test.skipIf(!chromiumPresent)("a task waiting and one withdrawn by its client, on /approvals: axe in light and dark at both widths", async () => {
  const c = await mcpClient(h.url, { token });
  const open = (to: string) =>
    c.client.request({ method: "tools/call", params: { name: "mail_send", arguments: { to, subject: "Hello", body: "Hi." }, task: {} } }, CreateTaskResultSchema, PATIENT) as Promise<any>;
  const withdrawn = await open("dave@example.com");
  await c.client.experimental.tasks.cancelTask(withdrawn.task.taskId, PATIENT);
  await open("erin@example.com");
  const page = await signedIn();
  const found = await everyLook(
    page,
    h.url,
    [
      {
        name: "approvals",
        path: "/approvals",
        ready: (p) => p.locator("section.ask", { hasText: "erin@example.com" }).waitFor(),
        fullPage: true,
      },
    ],
    { shots: ARTIFACTS },
  );
  expect(found).toEqual({});
  expect((await page.locator("tbody tr").allTextContents()).join("\n")).toContain("Withdrawn by the client");
  await c.close();
  await page.context().close();
});
