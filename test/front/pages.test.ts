// one store: the front pages over HTTP; the methods behind their cards and forms run on both stores in their services' tests
// The front door over real HTTP: the home page signed out and in (cards from
// real fixture answers, a failing service left out), the place form, the
// services page and its try-it form, and /status.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { settle } from "../../core/upstream/index.ts";
import type { Hearth } from "../harness.ts";
import { CLOSED, failing, getPage, postForm, signUp, startFront, startProviders, type Person } from "./instance.ts";

const fixture = startProviders();
let h: Hearth;
let ann: Person;
let bob: Person;
let annToken: string;

beforeAll(async () => {
  h = await startFront(fixture.url, { NOMINATIM_URL: fixture.url, USGS_URL: CLOSED, AI_API_KEY: "sk-very-secret-value", HEARTH_METERING: "off" });
  ann = await signUp(h.url, "ann"); // the first account: the admin
  bob = await signUp(h.url, "bob");
  annToken = await h.token("ann");
});
afterAll(async () => {
  await settle(h.rt);
  await h.stop();
  fixture.stop();
});

const text = (r: Response) => r.text();

/**
 * The home page as `who` sees it once no card was late. A card whose call outlasts the page's wait (on a busy
 * machine) is left out of that answer, "no answer within", and its provider's answer is cached for the next: the page
 * is asked again, so what the cards show is checked, not the machine's speed. A failing service says otherwise.
 */
async function home(who: Person): Promise<string> {
  for (;;) {
    const body = await text(await getPage(h.url, "/", who));
    if (!body.includes("no answer within")) return body;
  }
}

describe("home, signed out", () => {
  test("says what this is, offers sign-in, and lists the services anyone may use", async () => {
    const r = await getPage(h.url, "/", null);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-security-policy")).toContain("default-src 'none'");
    const body = await text(r);
    expect(body).toContain("Hearth is a home server");
    expect(body).toContain('href="/signin"');
    for (const open of ["weather", "markets", "places", "prayer"]) expect(body).toContain(`>${open}</a></dt>`);
    // notes has no public method: not listed for strangers.
    expect(body).not.toContain(">notes</a></dt>");
    expect(body).not.toContain("<script");
  });
});

describe("home, signed in", () => {
  test("with no events, tasks or place yet: only what is public now, and how to add a place", async () => {
    const body = await home(bob);
    expect(body).toContain("Hello, bob");
    expect(body).toContain('aria-labelledby="card-markets"');
    for (const none of ["events", "tasks", "weather", "prayer"]) expect(body).not.toContain(`aria-labelledby="card-${none}"`);
    expect(body).toContain("Name a town or give a latitude and longitude");
  });

  test("cards from events, tasks, weather, prayer times and markets, each linking to its service", async () => {
    await h.call("events/create", { title: "Dentist", when: "2026-11-21T15:00:00+00:00" }, { token: annToken });
    await h.call("events/create", { title: "Summer party", when: "2027-07-01T15:00:00+00:00" }, { token: annToken });
    await h.call("tasks/create", { title: "Buy milk", due: "2026-11-22 10:00" }, { token: annToken });
    const done = await h.call("tasks/create", { title: "Already done" }, { token: annToken });
    await h.call("tasks/update", { id: done.body.result.id, status: "done" }, { token: annToken });

    const saved = await postForm(h.url, "/home/place", ann, { csrf: ann.csrf, place: "51.5012, -0.1246", prayer: "1" });
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe("/?saved=1");

    const body = await text(await getPage(h.url, "/?saved=1", ann));
    expect(body).toContain("Saved.");
    const card = (service: string) => {
      const m = new RegExp(`<li class="card" aria-labelledby="card-${service}">([\\s\\S]*?)</section></li>`).exec(body);
      return m?.[1] ?? null;
    };
    expect(card("events")).toContain("Dentist");
    // Times in the zone of the person's place, as the forecast names it (London: GMT in November, BST in July).
    expect(card("events")).toContain("Dentist</span><span class=\"when\">Sat 21 Nov, 15:00</span>");
    expect(card("events")).toContain("Summer party</span><span class=\"when\">Thu 1 Jul, 16:00</span>");
    expect(card("tasks")).toContain("Buy milk");
    expect(card("tasks")).not.toContain("Already done");
    // The recorded Open-Meteo forecast: overcast, 6.4 °C now, feels like 2.9.
    expect(card("weather")).toContain("Now: overcast, 6°C, feels like 3°C.");
    expect(card("weather")).toContain("<span>Today</span><span class=\"when\">overcast, 4–8°C");
    expect(card("weather")).toContain("<span>Tomorrow</span><span class=\"when\">slight rain, 5–10°C, 86% rain");
    expect(card("weather")).toContain("<span>Monday</span>");
    // Prayer times in the place's own zone, taken from the forecast (Europe/London).
    expect(card("prayer")).toContain("Fajr");
    expect(card("prayer")).toMatch(/Next: Dhuhr at 11:\d\d\./);
    // The recorded CoinGecko prices.
    expect(card("markets")).toContain("Bitcoin (BTC)");
    expect(card("markets")).toContain("$97,000");
    expect(card("events")).toContain('href="/services#service-events"');
    // Services this instance lacks (mail, news) or with nothing now make no card and no complaint.
    expect(body).not.toContain("Not shown now");
  });

  test("headlines from the followed feed, and the latest mail", async () => {
    const sent = await h.call("mail/send", { to: "bob", subject: "Dinner on Friday", body: "Shall we?" }, { token: annToken });
    expect(sent.status).toBe(200);
    const body = await home(bob);
    const card = (service: string) => new RegExp(`<li class="card" aria-labelledby="card-${service}">([\\s\\S]*?)</section></li>`).exec(body)?.[1] ?? null;
    // The recorded BBC world feed, read when first asked.
    expect(card("news")).toContain("Headlines");
    expect(card("news")).toContain("Spain prepares for record crowds as eclipse tourism books out Cádiz");
    expect(card("news")).toContain('rel="noopener noreferrer"');
    // Mail here says nothing of read or unread, so the card says what it shows.
    expect(card("mail")).toContain("Latest mail");
    expect(card("mail")).toContain("Dinner on Friday");
    expect(card("mail")).toContain("ann");
  });

  test("the prayer times follow the convention the person chose; one not offered is refused by name", async () => {
    const r = await postForm(h.url, "/home/place", ann, { csrf: ann.csrf, place: "51.5012, -0.1246", prayer: "1", prayer_method: "mwl" });
    expect(r.status).toBe(303);
    const body = await home(ann);
    expect(body).toContain("<option selected>mwl</option>");
    const mwl = (await h.call("prayer/times", { lat: 51.5012, lon: -0.1246, tz: "Europe/London", method: "mwl" })).body.result.times;
    const isna = (await h.call("prayer/times", { lat: 51.5012, lon: -0.1246, tz: "Europe/London", method: "isna" })).body.result.times;
    expect(mwl.fajr).not.toBe(isna.fajr);
    expect(body).toContain(`<span>Fajr</span><span class="when">${mwl.fajr}</span>`);

    const bad = await postForm(h.url, "/home/place", ann, { csrf: ann.csrf, place: "51.5012, -0.1246", prayer: "1", prayer_method: "sundial" });
    expect(bad.status).toBe(400);
    expect(await text(bad)).toContain("prayer_method must be one of isna, mwl");
  });

  test("a failing service is left out and said so; the rest still show", async () => {
    const cat = await signUp(h.url, "cat");
    await h.call("tasks/create", { title: "Feed the fish" }, { token: await h.token("cat") });
    failing.weather = true;
    try {
      // A place nobody asked about before, so there is no held copy of its forecast to fall back on.
      expect((await postForm(h.url, "/home/place", cat, { csrf: cat.csrf, place: "48.85, 2.35" })).status).toBe(303);
      const r = await getPage(h.url, "/", cat);
      expect(r.status).toBe(200);
      const body = await text(r);
      expect(body).not.toContain('aria-labelledby="card-weather"');
      expect(body).toMatch(/Not shown now: weather \([^)]+\)/);
      expect(body).toContain('aria-labelledby="card-tasks"');
      expect(body).toContain("Feed the fish");
    } finally {
      failing.weather = false;
    }
  });

  test("a place by name goes through the geocoder; an unknown one is refused, naming it", async () => {
    const r = await postForm(h.url, "/home/place", bob, { csrf: bob.csrf, place: "London" });
    expect(r.status).toBe(303);
    const body = await home(bob);
    expect(body).toContain("London, Greater London, England, United Kingdom");
    expect(body).toContain('aria-labelledby="card-weather"');
    // bob did not ask for prayer times.
    expect(body).not.toContain('aria-labelledby="card-prayer"');

    const unknown = await postForm(h.url, "/home/place", bob, { csrf: bob.csrf, place: "Nowhere-on-earth" });
    expect(unknown.status).toBe(404);
    const said = await text(unknown);
    expect(said).toContain('role="alert">no place found for &quot;Nowhere-on-earth&quot;');
    expect(said).toContain('value="Nowhere-on-earth"');
    const far = await postForm(h.url, "/home/place", bob, { csrf: bob.csrf, place: "95, 10" });
    expect(far.status).toBe(400);
  });

  test("the place form needs the session's CSRF token", async () => {
    const r = await postForm(h.url, "/home/place", bob, { place: "0, 0" });
    expect(r.status).toBe(403);
    expect(await home(bob)).toContain("London, Greater London");
  });
});

describe("services", () => {
  test("every method of the registry, with access and price; strangers are asked to sign in to try", async () => {
    const body = await text(await getPage(h.url, "/services", null));
    for (const e of h.rt.registry.list()) expect(body).toContain(`id="${e.tool}"`);
    expect(body).toContain("<code>POST /api/v1/notes/add</code>");
    expect(body).toContain("<code>notes/add</code> <span class=\"tag\">POST</span>");
    expect(body).toContain('<span class="tag">account</span>');
    expect(body).toContain("Sign in</a> to try it here.");
    expect(body).not.toContain('name="csrf"');
  });

  test("try it: the form calls the method as the signed-in person and shows the JSON", async () => {
    const r = await postForm(h.url, "/services", ann, { csrf: ann.csrf, method: "notes/add", "a.title": "from the page", "a.text": "typed in a form" });
    expect(r.status).toBe(200);
    const body = await text(r);
    expect(body).toContain("<strong>HTTP 200</strong>");
    expect(body).toContain("&quot;title&quot;: &quot;from the page&quot;");
    const read = await h.call("notes/get", { title: "from the page" }, { token: annToken });
    expect(read.body.result).toMatchObject({ title: "from the page", text: "typed in a form" });
  });

  test("try it: arguments are coerced by the schema, and a refusal is shown with its field", async () => {
    const ok = await text(await postForm(h.url, "/services", ann, { csrf: ann.csrf, method: "markets/convert", "a.amount": "", "a.from": "USD", "a.to": "EUR" }));
    expect(ok).toContain("<strong>HTTP");
    const bad = await text(await postForm(h.url, "/services", ann, { csrf: ann.csrf, method: "weather/forecast", "a.lat": "north", "a.lon": "0" }));
    expect(bad).toContain("<strong>HTTP 400</strong>");
    expect(bad).toContain("&quot;field&quot;: &quot;lat&quot;");
    // What was typed is kept in the form.
    expect(bad).toContain('value="north"');
  });

  test("try it needs the CSRF token and a session; nothing is written without them", async () => {
    const noToken = await postForm(h.url, "/services", ann, { method: "notes/add", "a.title": "forged", "a.text": "x" });
    expect(noToken.status).toBe(403);
    const stranger = await postForm(h.url, "/services", null, { method: "notes/add", "a.title": "forged", "a.text": "x" });
    expect(stranger.status).toBe(401);
    expect((await h.call("notes/get", { title: "forged" }, { token: annToken })).status).toBe(404);
  });
});

describe("status", () => {
  test("version, uptime and what is configured, with no secret in it; a stranger is not told what answers", async () => {
    const r = await getPage(h.url, "/status", null, "application/json");
    expect(r.status).toBe(200);
    const raw = await text(r);
    expect(raw).not.toContain("sk-very-secret-value");
    const s = JSON.parse(raw).result;
    expect(s.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(s.uptime_seconds).toBeGreaterThanOrEqual(0);
    expect(s.methods).toBe(h.rt.registry.methods.size);
    const provider = (name: string) => s.providers.find((p: { name: string }) => p.name === name);
    // Strangers are told what is configured, not where providers live or whether they answer.
    expect(provider("OPEN_METEO")).toMatchObject({ configured: true, note: "OPEN_METEO_URL", probe: null });
    expect(provider("OPEN_METEO").url).toBeUndefined();
    const ai = s.integrations.find((i: { name: string }) => i.name === "ai");
    expect(ai).toMatchObject({ configured: false, probe: null });
    expect(s.integrations.find((i: { name: string }) => i.name === "mail")).toMatchObject({ configured: false, note: expect.stringContaining("MAIL_DOMAIN") });
    expect(s.keys).toContainEqual({ setting: "AI_API_KEY", set: true });
    expect(s.keys).toContainEqual({ setting: "AI_IMAGE_API_KEY", set: false });
  });

  test("an admin also sees where each provider is reached and whether it answers; the page reads as a table", async () => {
    let s = (await (await getPage(h.url, "/status", ann, "application/json")).json()).result;
    while ([...s.providers, ...s.integrations].some((c: { checking: boolean }) => c.checking)) {
      await Bun.sleep(20);
      s = (await (await getPage(h.url, "/status", ann, "application/json")).json()).result;
    }
    const provider = (name: string) => s.providers.find((p: { name: string }) => p.name === name);
    expect(provider("OPEN_METEO")).toMatchObject({ configured: true, url: fixture.url, probe: { answers: true } });
    expect(provider("USGS")).toMatchObject({ probe: { answers: false, said: "could not connect" } });
    expect(s.integrations.find((i: { name: string }) => i.name === "ai")).toMatchObject({ configured: false, probe: { answers: false } });
    const page = await text(await getPage(h.url, "/status", ann));
    expect(page).toContain("<h1>Status</h1>");
    expect(page).toContain("does not answer");
    expect(page).not.toContain("sk-very-secret-value");
  });
});

describe("home, opened from another site", () => {
  test("cards that cost credits are not run, so a link elsewhere cannot spend them; opened here, they are", async () => {
    const metered = await startFront(fixture.url, { HEARTH_METER_ACCOUNTS: "all" });
    try {
      const cy = await signUp(metered.url, "cyd");
      await metered.grant("cyd", 10);
      expect((await postForm(metered.url, "/home/place", cy, { csrf: cy.csrf, place: "51.5012, -0.1246" })).status).toBe(303);
      const balance = async () => (await metered.call("credits/balance", {}, { headers: { cookie: cy.cookie } })).body.result.balance as number;
      const open = (site: string) => fetch(`${metered.url}/`, { headers: { cookie: cy.cookie, "sec-fetch-site": site, "sec-fetch-mode": "navigate" } }).then(text);

      const away = await open("cross-site");
      expect(away).not.toContain('aria-labelledby="card-weather"');
      expect(away).toContain("opened from another site");
      expect(await balance()).toBe(10);

      const here = await open("none");
      expect(here).toContain('aria-labelledby="card-weather"');
      expect(await balance()).toBeLessThan(10);
    } finally {
      await settle(metered.rt);
      await metered.stop();
    }
  });
});
