// A held copy of a live request (DeliveryFrame.live_rid) in the delivery loop (local-agent/delivery/
// held-copy.ts with delivery.ts and live/live-outcomes.ts): a copy whose live request the target took is
// acknowledged and never posted; one it refused goes to the dead shelf with the target's status; one it
// failed, or that the agent does not know, is posted as any event; one whose live request is still under
// way waits for it (its lane with it), then settles; a frame without live_rid is posted as before.
import { afterEach, describe, expect, it } from "vitest";
import { LiveOutcomes } from "../../local-agent/live/live-outcomes.ts";
import { waitUntil } from "../support/node/stack.ts";
import { forwardFrame, gatewayFrame, startStandinApp, wiredLoop } from "./forward-app.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function loopWith(outcomes: LiveOutcomes) {
  const wired = wiredLoop({ heldCopies: { verdict: (rid, id) => outcomes.verdict(rid, id) } });
  cleanups.push(() => wired.loop.stop(0));
  return wired;
}

describe("held copies of live requests", () => {
  it("acknowledges a copy the target took live, rejects one it refused, posts one it failed or one not known", async () => {
    const outcomes = new LiveOutcomes();
    for (const [rid, status] of [["rid_took0001", 200], ["rid_refused1", 403], ["rid_failed01", 503]] as const) {
      outcomes.begin(rid);
      outcomes.settle(rid, { status, detail: status === 403 ? "bad signature" : "", failure: null });
    }
    const wired = loopWith(outcomes);
    wired.loop.push({ ...gatewayFrame(1, "sources/a"), live_rid: "rid_took0001" });
    wired.loop.push({ ...gatewayFrame(2, "sources/b"), live_rid: "rid_refused1" });
    wired.loop.push({ ...gatewayFrame(3, "sources/c"), live_rid: "rid_failed01" });
    wired.loop.push({ ...gatewayFrame(4, "sources/d"), live_rid: "rid_unknown1" });
    wired.loop.push(gatewayFrame(5, "sources/e"));
    await waitUntil("all finished", () => wired.acked.length + wired.rejected.length === 5);
    expect(wired.gatewayPosts.sort()).toEqual(["sources/c", "sources/d", "sources/e"]);
    expect(wired.acked.sort()).toEqual([1, 3, 4, 5]);
    expect(wired.rejected).toEqual([{ id: 2, rejection: { status: 403, attempts: 0, reason: expect.stringContaining("403: bad signature") } }]);
    expect(wired.events.find((e) => e.id === 1)).toMatchObject({ outcome: "delivered", status: 200, attempts: 0, detail: expect.stringContaining("not posted again") });
  });

  it("waits for a live request still under way, holding its lane, then settles the copy by its answer", async () => {
    const app = await startStandinApp();
    cleanups.push(() => app.close());
    const outcomes = new LiveOutcomes();
    outcomes.begin("rid_slow0001");
    const wired = loopWith(outcomes);
    wired.loop.push({ ...forwardFrame(1, { target: app.url, lane: "source:shop" }), live_rid: "rid_slow0001" });
    wired.loop.push(forwardFrame(2, { target: app.url, lane: "source:shop" }));
    await waitUntil("the lane at work", () => wired.loop.status.in_flight === 1);
    const settledAt = Date.now();
    outcomes.settle("rid_slow0001", { status: 202, detail: "", failure: null });
    await waitUntil("both finished", () => wired.acked.length === 2);
    expect(wired.acked).toEqual([1, 2]);
    // Only the second reached the app (the first had answered live), and only once the first was settled.
    expect(app.requests.map((r) => r.body.toString())).toEqual(['{"n":2}']);
    expect(app.requests[0]!.at).toBeGreaterThanOrEqual(settledAt);
  });
});
