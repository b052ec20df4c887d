// An instance for the front-door tests, its providers answered by loopback
// fixtures that replay recorded payloads, and a person signed in the way a
// browser or a program signs in.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildRegistry } from "../../core/registry.ts";
import { allProviders } from "../../core/upstream/providers.ts";
import { startHearth, TestClock } from "../harness.ts";
import { json, recorded, startFixture } from "../upstream/fixture-server.ts";

export const clock = new TestClock(new Date("2026-11-21T10:00:00Z").getTime());

/** Which recorded answers fail, to see the page tolerate a failing service. */
export const failing = { weather: false };

export function startProviders() {
  return startFixture({
    "/v1/forecast": () => (failing.weather ? new Response("Internal Server Error", { status: 500 }) : json(recorded("open-meteo", "forecast.json"))),
    "/v2/exchange-rates": () => json(recorded("coinbase", "exchange-rates-usd.json")),
    "/api/v3/simple/price": () => json(recorded("coingecko", "simple-price.json")),
    "/bbc/world.xml": () => new Response(recorded("rss", "bbc-world.xml"), { headers: { "content-type": "application/xml" } }),
    "/search": (q) => json(recorded("nominatim", q.get("q") === "London" ? "search-london.json" : "search-empty.json")),
  });
}

/** A closed loopback port: a provider pointed here does not answer. */
export const CLOSED = "http://127.0.0.1:9";

/** The news service follows one feed, the BBC's recorded world feed, served by the fixture. */
function feedsFile(fixtureUrl: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "hearth-front-")), "feeds.json");
  writeFileSync(file, JSON.stringify({ feeds: [{ topic: "world", name: "BBC News: World", url: `${fixtureUrl}/bbc/world.xml` }] }));
  return file;
}

export async function startFront(fixtureUrl: string, env: Record<string, string> = {}, o: { clock?: TestClock } = {}) {
  // Every provider is pointed at the fixture, so nothing here reaches the internet (the status page probes them all).
  await buildRegistry({ pluginsDir: join(import.meta.dir, "..", "..", "plugins") });
  const providers: Record<string, string> = {};
  for (const p of allProviders()) providers[`${p.name}_URL`] = fixtureUrl;
  return startHearth({
    clock: o.clock ?? clock,
    env: {
      ...providers,
      OPEN_METEO_URL: fixtureUrl,
      CHAIN_RPC_URL: fixtureUrl,
      AI_OLLAMA_URL: CLOSED,
      UPSTREAM_TIMEOUT_MS: "5000",
      UPSTREAM_RETRY_MS: "1",
      HEARTH_SIGNUP: "open",
      // No scheduled polls: the news service reads its feed when first asked.
      HEARTH_COLLECTORS: "off",
      NEWS_FEEDS_FILE: feedsFile(fixtureUrl),
      WEB_FETCH_ALLOW_LOOPBACK: "true",
      ...env,
    },
  });
}

export interface Person {
  cookie: string;
  csrf: string;
}

/** Signs up over the JSON form of /signup, as a program holding a session does. */
export async function signUp(url: string, username: string): Promise<Person> {
  const res = await fetch(`${url}/signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username, password: "a long passphrase" }) });
  if (res.status !== 200) throw new Error(`sign-up answered ${res.status}: ${await res.text()}`);
  const cookie = res.headers.get("set-cookie")!.split(";")[0];
  return { cookie, csrf: (await res.json()).result.csrf };
}

/** Posts a page's form (urlencoded, as a browser does) with the session cookie. */
export function postForm(url: string, path: string, who: Person | null, fields: Record<string, string>) {
  return fetch(`${url}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", ...(who ? { cookie: who.cookie } : {}) },
    body: new URLSearchParams(fields).toString(),
  });
}

export function getPage(url: string, path: string, who: Person | null, accept = "text/html") {
  return fetch(`${url}${path}`, { redirect: "manual", headers: { accept, ...(who ? { cookie: who.cookie } : {}) } });
}
