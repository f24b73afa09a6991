// A forwarding source's policy (local-agent/forward/forward-delivery.ts, target-backoff.ts), through the
// delivery loop against real local apps on ephemeral ports: a refused connection spends nothing of an
// event's retry budget (it waits, probing, until the app answers); answered failures, time-outs and
// resets spend it, and past it the event goes to the dead shelf with a reason a person can act on while
// its lane goes on; the back-off is the target's (at once after its first two failures, reset by a success,
// not multiplied by parallel failures, one probe at a time); an unordered source posts several at once
// and an ordered one one at a time; the status shows the head's next try and spent budget, and its lane.
// Waits are injected (timings.forwardRetryDelay); no test sleeps.
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { sourceLane } from "../../protocol/index.ts";
import { createAppClient } from "../../local-agent/forward/app-client.ts";
import { waitUntil } from "../support/node/stack.ts";
import { forwardCleanups, forwardFrame, wiredLoop } from "./forward-app.ts";

const { cleanups, app, stopAfter } = forwardCleanups();

/** An app whose every request `handle` deals with (hold it, hang, reset the connection); `open`: requests not yet answered, `most`: the most at once. */
async function rawApp(handle: (req: IncomingMessage, res: ServerResponse, app: RawApp) => void) {
  const app: RawApp = { url: "", held: [], seen: 0, open: 0, most: 0 };
  const server = createServer((req, res) => {
    app.seen++;
    app.open++;
    app.most = Math.max(app.most, app.open);
    let ended = false;
    const end = () => {
      if (!ended) app.open--;
      ended = true;
    };
    res.on("finish", end);
    res.on("close", end);
    req.resume();
    handle(req, res, app);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  app.url = `http://127.0.0.1:${address && typeof address !== "string" ? address.port : 0}`;
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return app;
}

interface RawApp {
  url: string;
  held: ServerResponse[];
  seen: number;
  open: number;
  most: number;
}

const SHOP = sourceLane("shop");

describe("the retry budget", () => {
  it("a refused connection spends none of it: the head waits, probing, past the budget's count, and goes when the app is up", async () => {
    const shop = await app();
    await shop.down();
    const wired = wiredLoop({ timings: { forwardRetryDelay: () => 5 } });
    stopAfter(wired.loop);
    wired.loop.push(forwardFrame(1, { target: shop.url, lane: SHOP, policy: { retries: 1 } }));
    wired.loop.push(forwardFrame(2, { target: shop.url, lane: SHOP, policy: { retries: 1 } }));
    await waitUntil("five refused attempts", () => wired.events.filter((e) => e.id === 1 && e.outcome === "retrying").length >= 5);
    expect(wired.loop.forwards.status()[0]).toMatchObject({ head_failures: 0, last_error: expect.stringMatching(/^connection refused by/) });
    expect(wired.rejected).toEqual([]);
    await shop.up();
    await waitUntil("both delivered", () => wired.acked.length === 2);
    expect(wired.acked).toEqual([1, 2]);
    expect(wired.rejected).toEqual([]);
  });

  it("answered failures spend it: past `retries` the head goes to the dead shelf saying what failed, how often, and the replay command; its lane goes on", async () => {
    const shop = await app();
    shop.script({ status: 503, body: "down for maintenance" }, { status: 503, body: "down for maintenance" }, { status: 503, body: "down for maintenance" });
    const wired = wiredLoop({ timings: { forwardRetryDelay: () => 5 } });
    stopAfter(wired.loop);
    wired.loop.push(forwardFrame(1, { target: `${shop.url}/hooks`, lane: SHOP, policy: { retries: 2 } }));
    wired.loop.push(forwardFrame(2, { target: `${shop.url}/hooks`, lane: SHOP, policy: { retries: 2 } }));
    await waitUntil("the head shelved and the next delivered", () => wired.rejected.length === 1 && wired.acked.includes(2));
    const { id, rejection } = wired.rejected[0]!;
    expect(id).toBe(1);
    expect(rejection).toMatchObject({ status: 503, attempts: 3 });
    expect(rejection.reason).toBe(`the app at ${shop.url}/hooks failed this event 3 times (last: the app answered 503: down for maintenance); source "shop" allows 2 retries. Once the app is fixed: clawrelay messages replay 1`);
    expect(shop.requests.map((r) => r.body.toString())).toEqual(['{"n":1}', '{"n":1}', '{"n":1}', '{"n":2}']);
    expect(wired.loop.forwards.status()[0]).toMatchObject({ delivered: 1, rejected: 1, head_failures: 0 });
  });

  it("a time-out spends it (the source's timeout_sec is the post's limit)", async () => {
    const hanging = await rawApp(() => {});
    const wired = wiredLoop();
    stopAfter(wired.loop);
    wired.loop.push(forwardFrame(1, { target: hanging.url, lane: SHOP, policy: { retries: 0, timeout_sec: 1 } }));
    await waitUntil("shelved", () => wired.rejected.length === 1);
    expect(wired.rejected[0]!.rejection).toMatchObject({ status: 0, attempts: 1 });
    expect(wired.rejected[0]!.rejection.reason).toMatch(/failed this event 1 time \(last: no answer from 127\.0\.0\.1:\d+: no answer within 1000 ms\); source "shop" allows 0 retries/);
  });

  it("a reset connection spends it", async () => {
    const resetting = await rawApp((req) => req.socket.destroy());
    const wired = wiredLoop({ timings: { forwardRetryDelay: () => 5 } });
    stopAfter(wired.loop);
    wired.loop.push(forwardFrame(1, { target: resetting.url, lane: SHOP, policy: { retries: 1 } }));
    await waitUntil("shelved", () => wired.rejected.length === 1);
    expect(resetting.seen).toBe(2);
    expect(wired.rejected[0]!.rejection.reason).toMatch(/failed this event 2 times \(last: .*(reset|hang up)/);
  });
});

describe("the back-off is the target's", () => {
  it("its first retry after a success goes at once, each failure in a row adds one, a success resets it, and the next head waits the same back-off (not its own)", async () => {
    const shop = await app();
    shop.script({ status: 503 }, { status: 503 }, { status: 200 }, { status: 502 }, { status: 502 }, { status: 502 });
    const asked: number[] = [];
    const wired = wiredLoop({ timings: { forwardRetryDelay: (failuresInRow) => (asked.push(failuresInRow), failuresInRow <= 1 ? 0 : 40) } });
    stopAfter(wired.loop);
    for (const id of [1, 2, 3]) wired.loop.push(forwardFrame(id, { target: shop.url, lane: SHOP, policy: { retries: 2 } }));
    await waitUntil("all three finished", () => wired.acked.length + wired.rejected.length === 3);
    // 1: 503, 503 at once, 200 after 40 ms. 2: 502, 502 at once, 502 after 40 ms → shelved. 3: waits the back-off of the target's third failure.
    expect(asked).toEqual([1, 2, 1, 2, 3]);
    expect(wired.acked).toEqual([1, 3]);
    expect(wired.rejected.map((r) => r.id)).toEqual([2]);
    const at = shop.requests.map((r) => r.at);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(35);
    expect(at[6]! - at[5]!).toBeGreaterThanOrEqual(35);
  });

  it("parallel failures of an unordered source count once; while it fails one probe at a time asks it; its success lets the rest go together", async () => {
    let failing = true;
    const shop = await rawApp((_req, res) => res.writeHead(failing ? 503 : 200).end(failing ? "busy" : "ok"));
    const asked: number[] = [];
    const client = createAppClient();
    cleanups.push(async () => client.close());
    const posted: number[] = [];
    const wired = wiredLoop({
      timings: { forwardRetryDelay: (n) => (asked.push(n), 3_600_000) },
      postToApp: (request, signal) => (posted.push(JSON.parse(new TextDecoder().decode(request.body)).n), client.post(request, signal)),
    });
    stopAfter(wired.loop);
    for (const id of [1, 2, 3, 4]) wired.loop.push(forwardFrame(id, { target: shop.url, lane: SHOP, policy: { ordered: false }, ttlMs: 7_200_000 }));
    await waitUntil("all four failed", () => new Set(wired.events.filter((e) => e.outcome === "retrying").map((e) => e.id)).size === 4);
    expect(asked).toEqual([1]);
    expect(posted).toHaveLength(4);
    failing = false;
    // The probe's wait cut short: only it posts (whatever would post has done so before the next turn of the event loop).
    wired.loop.retryNow();
    await new Promise((resolve) => setImmediate(resolve));
    expect(posted).toHaveLength(5);
    await waitUntil("all delivered", () => wired.acked.length === 4);
    expect(posted).toHaveLength(8);
    expect(wired.rejected).toEqual([]);
  });
});

describe("order", () => {
  it("an unordered source posts up to the forward concurrency at once; an ordered one, one at a time", async () => {
    const unordered = await rawApp((_req, res, self) => self.held.push(res));
    const ordered = await rawApp((_req, res, self) => self.held.push(res));
    const wired = wiredLoop({ concurrency: 3 });
    stopAfter(wired.loop);
    for (const id of [1, 2, 3, 4, 5]) wired.loop.push(forwardFrame(id, { source: "bulk", target: unordered.url, lane: sourceLane("bulk"), policy: { ordered: false } }));
    for (const id of [6, 7]) wired.loop.push(forwardFrame(id, { source: "shop", target: ordered.url, lane: SHOP }));
    await waitUntil("three of the unordered source's at the app", () => unordered.held.length === 3);
    await waitUntil("the ordered source's head at its app", () => ordered.held.length === 1);
    expect(wired.loop.status.lanes.find((l) => l.lane === "source:bulk")).toMatchObject({ posting: 3, waiting: 2 });
    while (wired.acked.length < 7) {
      for (const res of [...unordered.held.splice(0), ...ordered.held.splice(0)]) res.writeHead(200).end("ok");
      await waitUntil("the next posts or the last acks", () => unordered.held.length + ordered.held.length > 0 || wired.acked.length === 7);
    }
    expect(unordered.most).toBe(3);
    expect(ordered.most).toBe(1);
    expect(wired.acked.filter((id) => id >= 6)).toEqual([6, 7]);
  });
});

describe("status", () => {
  it("a waiting head shows its next try and the failures it spent; its lane shows waiting, posting, since, next try and the last error; retry cuts the wait", async () => {
    const shop = await app();
    shop.script({ status: 503, body: "later" }, { status: 503, body: "later" });
    const wired = wiredLoop({ timings: { forwardRetryDelay: (n) => (n <= 1 ? 0 : 3_600_000) } });
    stopAfter(wired.loop);
    const first = forwardFrame(1, { target: shop.url, lane: SHOP, ttlMs: 7_200_000 });
    wired.loop.push(first);
    wired.loop.push(forwardFrame(2, { target: shop.url, lane: SHOP, ttlMs: 7_200_000 }));
    await waitUntil("two failures", () => shop.requests.length === 2 && wired.loop.forwards.status()[0]!.next_try_at !== null);
    const target = wired.loop.forwards.status()[0]!;
    expect(target.head_failures).toBe(2);
    expect(target.next_try_at).toBeGreaterThan(Date.now() + 3_000_000);
    expect(wired.loop.status.lanes).toEqual([{ lane: SHOP, waiting: 1, posting: 1, since: first.received_at, next_try_at: target.next_try_at, last_error: "the app answered 503: later" }]);
    wired.loop.retryNow();
    await waitUntil("both delivered", () => wired.acked.length === 2);
    expect(wired.loop.forwards.status()[0]).toMatchObject({ next_try_at: null, head_failures: 0 });
    expect(wired.loop.status.lanes).toEqual([]);
  });
});
