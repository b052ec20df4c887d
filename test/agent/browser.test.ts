// one store: the /agent page's script; conversations run on both stores in test/agent/agent.test.ts
// The /agent page in a real browser: its script runs under the page's
// Content-Security-Policy, posts with the session's CSRF token, shows the
// answer as it streams, and continues the same conversation on the next send.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { signUp } from "../auth/people.ts";
import { startOpenAiFixture, type OpenAiFixture } from "../fixtures/openai/server.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { launchChromium, chromiumPresent } from "../browser.ts";
import { CHROMIUM } from "../prepare.ts";

const present = chromiumPresent;
if (!present) console.log(`skipping the agent page's browser test: ${CHROMIUM} is missing (bun test/prepare.ts installs it as root)`);

let ai: OpenAiFixture;
let h: Hearth;
let browser: Browser;

beforeAll(async () => {
  if (!present) return;
  ai = await startOpenAiFixture();
  h = await startHearth({ env: { AI_BASE_URL: ai.base, AI_MODEL: "m", AI_OLLAMA_URL: "", UPSTREAM_RETRY_MS: "0", AGENT_WORKER: "off", HEARTH_SIGNUP: "open", HEARTH_METERING: "off" } });
  browser = await launchChromium();
});
afterAll(async () => {
  if (!present) return;
  await browser?.close();
  await h.stop();
  ai.stop();
});

test.skipIf(!present)("a message sent from the page streams its answer in, and the next one continues the conversation", async () => {
  const erin = await signUp(h, "erin");
  const context = await browser.newContext();
  const [name, value] = erin.cookie.split("=");
  await context.addCookies([{ name, value, url: h.url }]);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
  page.on("pageerror", (e) => problems.push(String(e)));
  await page.goto(`${h.url}/agent`);


  ai.reply({ stream: ["The kettle ", "is on."] });
  await page.fill("#message", "Is the kettle on?");
  await page.click("#ask button[type=submit]");
  await page.locator(".msg.assistant p", { hasText: "The kettle is on." }).waitFor().catch((e) => {
    throw new Error(`${e.message}\n${problems.join("\n")}`);
  });
  // The answer's text streams in before the run is recorded: the conversation's id comes with the final line, after which the button is enabled again.
  const answered = () => page.locator("#ask button[type=submit]:not([disabled])").waitFor();
  await answered();
  const conversation = await page.inputValue("input[name=conversation]");
  expect(conversation).not.toBe("");
  expect(new URL(page.url()).searchParams.get("c")).toBe(conversation);

  ai.reply({ stream: ["Still on."] });
  await page.fill("#message", "And now?");
  await page.click("#ask button[type=submit]");
  await page.locator(".msg.assistant p", { hasText: "Still on." }).waitFor();
  await answered();
  expect(ai.posts.at(-1)!.body.messages.slice(1).map((m: any) => m.content)).toEqual(["Is the kettle on?", "The kettle is on.", "And now?"]);
  expect(problems).toEqual([]);

  // Reloaded, the page shows the conversation from the record.
  await page.reload();
  expect(await page.locator(".msg p").allTextContents()).toEqual(["Is the kettle on?", "The kettle is on.", "And now?", "Still on."]);
  await context.close();
});
