// one store: the Recall screen; listing and searching conversations run on both stores in test/recall/recall.test.ts
// The Recall screen in Chromium, as a person uses it: past conversations with
// the agent listed, one searched by a word it holds and opened at the message
// found, the search narrowed to one client, and a conversation held meanwhile
// appearing without a reload. The screen passes axe in light and dark at a
// laptop's and a phone's width (screenshots in test/artifacts/screens).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { signUp, type Signed } from "../auth/people.ts";
import { chromiumPresent, everyLook, launchChromium } from "../browser.ts";
import { startOpenAiFixture, type OpenAiFixture } from "../fixtures/openai/server.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { signedIn, WIDTHS, type SignedInOptions } from "./signed-in.ts";

const SHOTS = join(import.meta.dir, "..", "artifacts", "screens");
const store = () => (process.env.HEARTH_TEST_DB === "pg" ? "pg" : "sqlite");

let ai: OpenAiFixture;
let h: Hearth;
let browser: Browser;
let erin: Signed;
let token: string;

async function ask(prompt: string, answer: string, conversation?: string): Promise<string> {
  ai.reply({ say: answer });
  const r = await h.call("agent/ask", { prompt, ...(conversation ? { conversation } : {}) }, { token });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  return r.body.result.conversation as string;
}

beforeAll(async () => {
  if (!chromiumPresent) return;
  mkdirSync(SHOTS, { recursive: true });
  ai = await startOpenAiFixture();
  h = await startHearth({
    env: { HEARTH_SIGNUP: "open", HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0", AI_BASE_URL: ai.base, AI_MODEL: "m", AI_OLLAMA_URL: "", UPSTREAM_RETRY_MS: "0", AGENT_WORKER: "off" },
  });
  erin = await signUp(h, "erin");
  token = await h.token("erin");
  browser = await launchChromium();
  const pears = await ask("When should I prune the pear tree?", "In late winter, while it is dormant.");
  await ask("And the quince?", "The same: late winter, thinning crossing branches.", pears);
  await ask("Suggest a name for the allotment blog", "How about “Plot Twists”?");
  await ask("What goes well with lentil soup?", "Crusty bread and a squeeze of lemon.");
});
afterAll(async () => {
  if (!chromiumPresent) return;
  await browser?.close();
  await h?.stop();
  ai?.stop();
});

const open = (o: SignedInOptions = {}) => signedIn(browser, h.url, erin, o);

for (const [label, size] of Object.entries(WIDTHS))
  test.skipIf(!chromiumPresent)(`a conversation is found by a word it holds and opened at that message, at ${size.width} px`, async () => {
    const { context, page, problems } = await open({ size });
    await page.goto(`${h.url}/my/recall`);
    // Most recently active first.
    const items = page.locator(".search-list .item-title");
    await items.first().waitFor();
    // (Leaving out the conversation the run at the other width held meanwhile.)
    expect((await items.allTextContents()).filter((t) => !t.includes("broad beans")).slice(0, 3)).toEqual(["What goes well with lentil soup?", "Suggest a name for the allotment blog", "When should I prune the pear tree?"]);

    await page.keyboard.press("s");
    await page.keyboard.type("thinning");
    const hit = page.locator(".search-list .item", { hasText: "When should I prune the pear tree?" });
    await hit.locator("mark", { hasText: "thinning" }).waitFor();
    await page.waitForURL(/q=thinning/);
    await hit.click();
    await page.waitForURL(/open=/);
    const found = page.locator(".messages li.found");
    await found.getByText("The same: late winter, thinning crossing branches.").waitFor();
    expect(await page.locator(".messages li").count()).toBe(4);
    expect(await page.locator(".messages li .who strong").allTextContents()).toEqual(["You", "Agent", "You", "Agent"]);
    if (label === "phone") {
      // One pane at a time: back to the results, still searched.
      await page.getByRole("button", { name: "← All conversations" }).click();
      await hit.waitFor();
    }

    // Nothing on the web yet: those held here were on the command line.
    await page.selectOption("#recall-client", "web");
    await page.getByText("Nothing said matches “thinning”.").waitFor();
    await page.selectOption("#recall-client", "cli");
    await hit.waitFor();
    await page.fill("#recall-search", "");
    await page.waitForURL((u) => !u.searchParams.has("q"));

    // A conversation held meanwhile shows without a reload.
    const topic = `Is it too late to sow broad beans? (${label})`;
    await ask(topic, "Not at all: autumn sowings overwinter well.");
    await page.locator(".search-list .item-title", { hasText: topic }).waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });

test.skipIf(!chromiumPresent)("the Recall screen passes axe in light and dark at 1280 and 390 px; screenshots for a look", async () => {
  const [conv] = (await h.call("recall/search", { query: "lemon" }, { token })).body.result;
  const { context, page } = await open({ bypassCSP: true });
  // Each screen loaded once and seen in the four looks in place (test/browser.ts).
  const found = await everyLook(
    page,
    h.url,
    [
      { name: "recall-list", path: "/my/recall", ready: (p) => p.locator(".search-list .item").first().waitFor() },
      { name: "recall-search", path: "/my/recall?q=winter", ready: (p) => p.locator(".search-list mark").first().waitFor() },
      { name: "recall-open", path: `/my/recall?q=lemon&open=${conv.conversation}&m=${conv.message}`, ready: (p) => p.locator(".messages li.found").waitFor() },
    ],
    { shots: SHOTS, suffix: `-${store()}` },
  );
  await context.close();
  expect(found).toEqual({});
});
