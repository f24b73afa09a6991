// Events forwarded to a local app (local-agent/forward/, through the delivery loop), against a real local
// app server: the request as the sender made it (method, body byte-exact, headers in order, the tail and
// query under the target), what each of the app's answers means (2xx, 503, 429 with Retry-After, 400,
// 302, no answer until the TTL), order per source with an app that is down for a while, and the
// independence of forwards and the gateway: neither's trouble holds up the other.
import { describe, expect, it } from "vitest";
import { classifyAppAnswer, forwardRetryDelay } from "../../local-agent/forward/app-response.ts";
import { waitUntil } from "../support/node/stack.ts";
import { forwardCleanups, forwardFrame, gatewayFrame, wiredLoop } from "./forward-app.ts";

const { app, stopAfter } = forwardCleanups();

/** The raw headers as [name, value] pairs, without those the HTTP connection itself adds. */
function senderHeaders(raw: string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (let i = 0; i < raw.length; i += 2) pairs.push([raw[i]!, raw[i + 1]!]);
  return pairs.filter(([name]) => !["host", "content-length", "connection"].includes(name.toLowerCase()));
}

describe("a forwarded event reaches the app as the sender made it", () => {
  it("method, body byte-exact, every header in order (signature unchanged, repeated names and the relay's own kept), tail and query joined; acked", async () => {
    const shop = await app();
    const wired = wiredLoop();
    stopAfter(wired.loop);
    const body = new Uint8Array([0x7b, 0x22, 0xc3, 0xa9, 0x22, 0x7d, 0xff, 0x00, 0x0d, 0x0a]);
    const headers: [string, string][] = [["content-type", "application/json; charset=utf-8"], ["stripe-signature", "t=1700000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd"], ["x-dup", "1"], ["user-agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)"], ["x-dup", "2"], ["x-clawrelay-source", "shop"], ["x-clawrelay-event", "payment_intent.succeeded"]];
    // A connection header in a frame (the relay keeps none) is dropped, never sent beside the agent's own.
    wired.loop.push(forwardFrame(7, { target: `${shop.url}/hooks?a=1`, tail: "/stripe/events?x=2", method: "PUT", body, headers: [...headers.slice(0, 2), ["transfer-encoding", "chunked"], ...headers.slice(2)] }));
    await waitUntil("the event acknowledged", () => wired.acked.includes(7));
    expect(shop.requests).toHaveLength(1);
    const seen = shop.requests[0]!;
    expect(seen.method).toBe("PUT");
    expect(seen.url).toBe("/hooks/stripe/events?a=1&x=2");
    expect([...seen.body]).toEqual([...body]);
    expect(senderHeaders(seen.rawHeaders)).toEqual(headers);
    const names = seen.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
    expect(names).toContain("content-length");
    expect(names).not.toContain("idempotency-key");
    expect(names).not.toContain("authorization");
    expect(wired.gatewayPosts).toEqual([]);
    const delivered = wired.events.find((e) => e.outcome === "delivered")!;
    expect(delivered).toMatchObject({ id: 7, status: 200, attempts: 1, subpath: "/stripe/events?x=2", sender: "source:shop", method: "PUT", target: `${shop.url}/hooks/stripe/events?a=1&x=2` });
    expect(wired.loop.forwards.status()).toEqual([expect.objectContaining({ source: "shop", target: `${shop.url}/hooks?a=1`, delivered: 1, rejected: 0, failing_since: null, last_answer: expect.objectContaining({ status: 200, id: 7 }) })]);
    expect(wired.loop.status.delivered).toBe(1);
  });

  it("regression: a tail that would leave the target's path is refused before any connection", async () => {
    const shop = await app();
    const wired = wiredLoop();
    stopAfter(wired.loop);
    wired.loop.push(forwardFrame(1, { target: `${shop.url}/hooks`, tail: "/../admin" }));
    wired.loop.push(forwardFrame(2, { target: `${shop.url}/hooks`, tail: "/a%2F..%2Fadmin" }));
    await waitUntil("both refused", () => wired.rejected.length === 2);
    expect(shop.requests).toEqual([]);
    for (const { rejection } of wired.rejected) expect(rejection).toMatchObject({ status: 0, attempts: 0, reason: expect.stringContaining("would leave the target's path") });
  });
});

describe("what the app's answer means", () => {
  it("503 then 200: retried at once (the target's first failure after a success) and delivered, attempts counted", async () => {
    const shop = await app();
    shop.script({ status: 503, body: "starting up" });
    const wired = wiredLoop();
    stopAfter(wired.loop);
    wired.loop.push(forwardFrame(1, { target: shop.url }));
    await waitUntil("delivered", () => wired.acked.includes(1));
    expect(shop.requests).toHaveLength(2);
    expect(wired.events.map((e) => [e.outcome, e.status, e.attempts])).toEqual([["retrying", 503, 1], ["delivered", 200, 2]]);
    expect(wired.events[0]!.detail).toBe("the app answered 503: starting up");
    expect(wired.loop.forwards.status()[0]!.failing_since).toBeNull();
  });

  it("429 with Retry-After: 1 waits the second it asks", async () => {
    const shop = await app();
    shop.script({ status: 429, headers: { "retry-after": "1" } });
    const wired = wiredLoop();
    stopAfter(wired.loop);
    wired.loop.push(forwardFrame(1, { target: shop.url }));
    await waitUntil("delivered", () => wired.acked.includes(1));
    expect(shop.requests[1]!.at - shop.requests[0]!.at).toBeGreaterThanOrEqual(950);
    // Capped at 5 minutes, however long the app asks for.
    expect(classifyAppAnswer({ kind: "answered", status: 429, retryAfter: "86400", location: null, detail: "" }, "shop")).toMatchObject({ kind: "retry", waitMs: 300_000 });
  });

  it("a Stripe event refused (4xx) when posted more than 300 s after Stripe signed it: the shelf reason adds the tolerance recipe and the replay command", async () => {
    const shop = await app();
    shop.script({ status: 400, body: "Webhook Error: Timestamp outside the tolerance zone" });
    const wired = wiredLoop();
    stopAfter(wired.loop);
    const signed = (ageSec: number): [string, string][] => [["content-type", "application/json"], ["stripe-signature", `t=${Math.floor(Date.now() / 1000) - ageSec},v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd`]];
    wired.loop.push(forwardFrame(11, { target: shop.url, headers: signed(2 * 3600) }));
    await waitUntil("refused", () => wired.rejected.length === 1);
    expect(wired.rejected[0]!.rejection.reason).toBe(
      "the app refused this event with 400: Webhook Error: Timestamp outside the tolerance zone. Stripe signed this event 2 h before it was posted, past the 300 s its SDK accepts by default; " +
        "the relay checked the signature when the event arrived, so give the SDK a longer tolerance — stripe.webhooks.constructEvent(body, signature, secret, 259200) — then: clawrelay messages replay 11",
    );
    // A fresh one refused for another reason, or an event without a Stripe signature, gets the app's words only.
    shop.script({ status: 400, body: "No signatures found matching the expected signature" });
    wired.loop.push(forwardFrame(12, { target: shop.url, headers: signed(10) }));
    shop.script({ status: 400, body: "bad" });
    wired.loop.push(forwardFrame(13, { target: shop.url }));
    await waitUntil("both refused", () => wired.rejected.length === 3);
    expect(wired.rejected.slice(1).map((r) => r.rejection.reason)).toEqual(["the app refused this event with 400: No signatures found matching the expected signature", "the app refused this event with 400: bad"]);
    // A stale one the app takes is simply delivered, and a 5xx is retried as ever.
    const late = signed(3600);
    expect(classifyAppAnswer({ kind: "answered", status: 503, retryAfter: null, location: null, detail: "" }, "shop", Date.now(), { headers: late, id: 1 })).toMatchObject({ kind: "retry", reason: "the app answered 503" });
    expect(classifyAppAnswer({ kind: "answered", status: 200, retryAfter: null, location: null, detail: "" }, "shop", Date.now(), { headers: late, id: 1 })).toEqual({ kind: "accepted" });
  });

  it("400: to the dead shelf with the status and the app's first bytes (≤ 200 characters, whitespace collapsed)", async () => {
    const shop = await app();
    shop.script({ status: 400, body: `  Webhook Error:\n\n  No signatures   found matching the expected signature ${"x".repeat(400)}` });
    const wired = wiredLoop();
    stopAfter(wired.loop);
    wired.loop.push(forwardFrame(1, { target: shop.url }));
    wired.loop.push(forwardFrame(2, { target: shop.url }));
    await waitUntil("one refused, the next delivered", () => wired.rejected.length === 1 && wired.acked.includes(2));
    const { rejection } = wired.rejected[0]!;
    expect(rejection).toMatchObject({ status: 400, attempts: 1 });
    expect(rejection.reason).toMatch(/^the app refused this event with 400: Webhook Error: No signatures found matching the expected signature x+$/);
    expect(rejection.reason.length).toBeLessThanOrEqual("the app refused this event with 400: ".length + 200);
    expect(wired.loop.status.recent_rejections[0]).toMatchObject({ id: 1, status: 400, subpath: "shop" });
    expect(wired.loop.forwards.status()[0]).toMatchObject({ delivered: 1, rejected: 1 });
  });

  it("302: not followed; to the dead shelf naming the Location and the command that forwards there", async () => {
    const shop = await app();
    shop.script({ status: 302, headers: { location: "/v2/webhooks" } });
    const wired = wiredLoop();
    stopAfter(wired.loop);
    wired.loop.push(forwardFrame(1, { target: `${shop.url}/webhooks` }));
    await waitUntil("refused", () => wired.rejected.length === 1);
    expect(shop.requests).toHaveLength(1);
    expect(wired.rejected[0]!.rejection).toMatchObject({ status: 302, attempts: 1 });
    expect(wired.rejected[0]!.rejection.reason).toContain(`the app redirected to ${shop.url}/v2/webhooks`);
    expect(wired.rejected[0]!.rejection.reason).toContain(`clawrelay sources set shop --forward ${shop.url}/v2/webhooks`);
  });

  it("no answer until the event's TTL ends: to the dead shelf as ttl_expired, attempts counted", async () => {
    const shop = await app();
    await shop.down();
    const wired = wiredLoop();
    stopAfter(wired.loop);
    wired.loop.push(forwardFrame(1, { target: shop.url, ttlMs: 900 }));
    await waitUntil("refused at its TTL", () => wired.rejected.length === 1);
    const { rejection } = wired.rejected[0]!;
    expect(rejection.reason).toMatch(/^ttl_expired while the app kept failing: connection refused by 127\.0\.0\.1:\d+/);
    expect(rejection.status).toBe(0);
    expect(rejection.attempts).toBeGreaterThanOrEqual(3);
    expect(wired.acked).toEqual([]);
  });

  it("a target's back-off: at once after its first two failures, then 250 ms doubling to 30 s", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((n) => forwardRetryDelay(n))).toEqual([0, 0, 250, 500, 1000, 2000, 4000, 8000, 16_000, 30_000]);
  });
});

describe("order per source, and forwards apart from the gateway", () => {
  it("an app down for a while, then up: each event delivered once, in order; the gateway's message and another source's go meanwhile", async () => {
    const shop = await app();
    const other = await app();
    await shop.down();
    // The app's retries 10 ms doubling to 80 ms (250 ms to 5 s by default: the waits are not what is tested).
    const wired = wiredLoop({ timings: { forwardRetryDelay: (failures) => Math.min(80, 10 * 2 ** (failures - 1)) } });
    stopAfter(wired.loop);
    for (const id of [1, 2, 3]) wired.loop.push(forwardFrame(id, { target: shop.url }));
    wired.loop.push(gatewayFrame(4));
    wired.loop.push(forwardFrame(5, { source: "crm", target: other.url }));
    await waitUntil("the gateway's and the other source's delivered", () => wired.acked.includes(4) && wired.acked.includes(5));
    expect(wired.acked).toEqual([4, 5]);
    // Five failures in a row would mean "gateway down" on the gateway's side: the app's count for nothing there.
    await waitUntil("five failed attempts at the app", () => wired.events.filter((e) => e.outcome === "retrying" && e.id === 1).length >= 5);
    const state = wired.loop.forwards.status().find((f) => f.source === "shop")!;
    expect(state.failing_since).not.toBeNull();
    expect(state.last_error).toMatch(/^connection refused by 127\.0\.0\.1:\d+/);
    expect(wired.loop.status.gateway_down).toBeNull();
    expect(wired.loop.status.last_error).toBeNull();
    wired.loop.push(gatewayFrame(6));
    await waitUntil("a later gateway message too", () => wired.acked.includes(6));
    await shop.up();
    await waitUntil("the app's three delivered", () => [1, 2, 3].every((id) => wired.acked.includes(id)));
    expect(shop.requests.map((r) => r.body.toString())).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
    expect(wired.acked.filter((id) => id <= 3)).toEqual([1, 2, 3]);
    expect(wired.loop.forwards.status().find((f) => f.source === "shop")).toMatchObject({ failing_since: null, last_error: null, delivered: 3 });
    expect(wired.rejected).toEqual([]);
  });

  it("a gateway paused by 401 holds no forwarded event, and a forwarded delivery does not lift the pause", async () => {
    const shop = await app();
    const wired = wiredLoop({ gateway: () => 401 });
    stopAfter(wired.loop);
    wired.loop.push(gatewayFrame(1));
    await waitUntil("paused", () => wired.loop.status.paused !== null);
    wired.loop.push(gatewayFrame(2, "agentgram_inbox/wake"));
    for (const id of [3, 4]) wired.loop.push(forwardFrame(id, { target: shop.url }));
    await waitUntil("both forwarded", () => wired.acked.includes(3) && wired.acked.includes(4));
    expect(wired.loop.status.paused).toMatch(/401/);
    // The paused gateway was asked once (its retry is a minute away); the second message waits its turn.
    expect(wired.gatewayPosts).toEqual(["agentgram_inbox/agent"]);
  });

  it("a gateway that is down (every post unreachable) holds no forwarded event", async () => {
    const shop = await app();
    const wired = wiredLoop({ gateway: () => 0 });
    stopAfter(wired.loop);
    for (const id of [1, 2, 3, 4, 5, 6]) wired.loop.push(gatewayFrame(id, `s${id}`));
    await waitUntil("the gateway seen down", () => wired.loop.status.gateway_down !== null);
    wired.loop.push(forwardFrame(7, { target: shop.url }));
    await waitUntil("forwarded", () => wired.acked.includes(7));
    expect(wired.loop.status.gateway_down).not.toBeNull();
  });

  it("with no gateway set up, forwarded events go and gateway-bound ones wait, paused with the reason, until there is one", async () => {
    const shop = await app();
    let gateway: { problem: string } | null = { problem: "no hooks.token in any OpenClaw config; enable hooks in openclaw.json (run clawrelay doctor)" };
    // Looking for a gateway every 20 ms (5 s by default: the wait is not what is tested).
    const wired = wiredLoop({ target: () => gateway ?? { port: 1, hooksPath: "/hooks", hooksToken: "t" }, timings: { noGatewayRetryMs: 20 } });
    stopAfter(wired.loop);
    wired.loop.push(gatewayFrame(1));
    wired.loop.push(forwardFrame(2, { target: shop.url }));
    await waitUntil("forwarded", () => wired.acked.includes(2));
    await waitUntil("the gateway's paused with the reason", () => wired.loop.status.paused !== null);
    expect(wired.loop.status.paused).toContain("no gateway to post to: no hooks.token");
    expect(wired.gatewayPosts).toEqual([]);
    expect(wired.rejected).toEqual([]);
    expect(wired.events.find((e) => e.id === 1)).toMatchObject({ outcome: "retrying", status: 0, attempts: 0 });
    gateway = null;
    await waitUntil("posted once the gateway is set up", () => wired.acked.includes(1));
    expect(wired.loop.status.paused).toBeNull();
    expect(wired.events.filter((e) => e.id === 1).at(-1)).toMatchObject({ outcome: "delivered", attempts: 1 });
  });
});
