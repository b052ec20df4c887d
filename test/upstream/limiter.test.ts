// The per-provider gate on its own, with time injected: a window's quota,
// requests in flight, and the line behind them.
import { expect, test } from "bun:test";
import { Gate, type Timer } from "../../core/upstream/limiter.ts";

class FakeTimer implements Timer {
  t = 0;
  slept: number[] = [];
  now() {
    return this.t;
  }
  async sleep(ms: number) {
    this.slept.push(ms);
    this.t += ms;
  }
}

test("a rate cap spaces starts across the window and refuses what would wait too long", async () => {
  const timer = new FakeTimer();
  const g = new Gate("Nominatim", 10, { count: 1, perMs: 1000 }, timer);
  (await g.enter(5000))();
  (await g.enter(5000))();
  expect(timer.slept).toEqual([1000]);
  // Four more reserve the next four seconds; the fifth would wait past the limit.
  const pending = [g.enter(5000), g.enter(5000), g.enter(5000), g.enter(5000)];
  for (const p of pending) (await p)();
  timer.t = 2000;
  const err = await g.enter(1500).catch((e) => e);
  expect(err.status).toBe(503);
  expect(err.headers["Retry-After"]).toBe("4");
});

test("no more than the cap in flight; a release hands its place to the next in line", async () => {
  const g = new Gate("Overpass", 2, undefined, new FakeTimer());
  const a = await g.enter(1000);
  const b = await g.enter(1000);
  let cEntered = false;
  const c = g.enter(1000).then((release) => {
    cEntered = true;
    return release;
  });
  await Promise.resolve();
  expect(cEntered).toBe(false);
  expect(g.inFlight).toBe(2);
  a();
  a(); // releasing twice is harmless
  const releaseC = await c;
  expect(cEntered).toBe(true);
  expect(g.inFlight).toBe(2);
  b();
  releaseC();
  expect(g.inFlight).toBe(0);
});

test("a line many times the cap long is refused rather than joined", async () => {
  const g = new Gate("Slow", 1, undefined, new FakeTimer());
  const first = await g.enter(1000);
  const waiting = Array.from({ length: 16 }, () => g.enter(1000));
  const err = await g.enter(1000).catch((e) => e);
  expect(err.status).toBe(503);
  expect(err.message).toContain("16 requests are waiting");
  first();
  for (const w of waiting) (await w)();
  expect(g.inFlight).toBe(0);
});
