// A person's browser for a screen's test: a fresh context (an empty cache, as
// a first visit has) holding their session's cookie, at the look asked for,
// with what goes wrong in its page noted. Every screen's test opens its pages
// this way, so they all sign in alike and watch the same errors.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { startSession } from "../../core/auth/sessions.ts";
import { ensureAccount } from "../../core/auth/tokens.ts";
import type { Signed } from "../auth/people.ts";
import { launchChromium } from "../browser.ts";
import { startHearth, type Hearth } from "../harness.ts";

/** A laptop's and a phone's window: the two widths every screen is checked at. */
export const WIDTHS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } };

export interface SignedInOptions {
  scheme?: "light" | "dark";
  size?: { width: number; height: number };
  /** For axe's script, added to the page. */
  bypassCSP?: boolean;
  /** "block" where each visit should reach the server rather than the app's worker. */
  serviceWorkers?: "allow" | "block";
  /** Console errors the test brings about on purpose (a server it stopped), over those any page may log. */
  expected?: RegExp;
}

export interface SignedIn {
  context: BrowserContext;
  page: Page;
  /** The page's uncaught errors and console errors: a test expects none. */
  problems: string[];
}

/**
 * A page signed in as `who` on the instance at `url`. A resource that failed
 * and the live stream reconnecting are logged by any page whose server goes
 * away or answers a refusal, so they are not counted as problems.
 */
export async function signedIn(browser: Browser, url: string, who: Signed, o: SignedInOptions = {}): Promise<SignedIn> {
  const context = await browser.newContext({
    colorScheme: o.scheme ?? "light",
    viewport: o.size ?? WIDTHS.desktop,
    bypassCSP: o.bypassCSP ?? false,
    ...(o.serviceWorkers && { serviceWorkers: o.serviceWorkers }),
  });
  const [name, value] = who.cookie.split("=");
  await context.addCookies([{ name: name!, value: value!, url }]);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(String(e)));
  page.on("console", (m) => m.type() === "error" && !/Failed to load resource|EventSource/.test(m.text()) && !o.expected?.test(m.text()) && problems.push(m.text()));
  return { context, page, problems };
}

/**
 * An instance with one person on it, their token and their session's cookie, and a Chromium: what a screen's
 * test that drives the API beside the page starts from. The caller stops both when it is done.
 */
export async function personAndBrowser(username: string): Promise<{ h: Hearth; token: string; cookie: { name: string; value: string; url: string }; browser: Browser }> {
  const h = await startHearth({ env: { HEARTH_METERING: "off" } });
  const token = await h.token(username);
  const account = await ensureAccount(h.rt.store, username);
  const { cookie: set } = await startSession(h.rt, new Request(`${h.url}/`), account);
  const [name, value] = set.split(";")[0]!.split("=") as [string, string];
  return { h, token, cookie: { name, value, url: h.url }, browser: await launchChromium() };
}
