// Abandon in the delivery loop (local-agent/delivery/delivery.ts, conversation-line.ts): the relay takes
// a message back (dropped by its owner, or sent again for a new target). A waiting one leaves its lane
// unposted; a started one stops where it is — a post to an app is given up (the app sees its connection
// closed), a gateway post already sent may land but its answer is ignored, a wait to retry ends — with
// neither ack nor reject, and its lane moves on at once; a message sent again after abandon is taken
// afresh; a pause its 401 caused no longer holds the others. Against a real local app and gateway posts
// the test answers by hand.
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import type { DeliveryFrame } from "../../protocol/index.ts";
import type { GatewayAnswer } from "../../local-agent/delivery/gateway-forwarder.ts";
import { waitUntil } from "../support/node/stack.ts";
import { forwardCleanups, forwardFrame, gatewayFrame, wiredLoop } from "./forward-app.ts";

const { cleanups, app, stopAfter } = forwardCleanups();

/** A gateway whose every post waits until the test answers it (by message id, from its Idempotency-Key). */
function handAnsweredGateway() {
  const waiting = new Map<number, (answer: GatewayAnswer) => void>();
  const posted: number[] = [];
  return {
    posted,
    waiting,
    post: (_target: unknown, _request: unknown, key: string | null) =>
      new Promise<GatewayAnswer>((resolve) => {
        const id = Number(key?.split(":").at(-1));
        posted.push(id);
        waiting.set(id, resolve);
      }),
    answer(id: number, status: number): void {
      waiting.get(id)!({ status, retryAfter: null, detail: "" });
      waiting.delete(id);
    },
  };
}

function inLane(frame: DeliveryFrame, lane: string): DeliveryFrame {
  return { ...frame, lane };
}

/** An app that holds every request (the test answers it), and says when a held one's connection closed unanswered. */
async function holdingApp() {
  const held: { req: IncomingMessage; res: ServerResponse }[] = [];
  const cut: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => held.push({ req, res }));
    res.on("close", () => {
      if (!res.writableEnded) cut.push(Buffer.concat(chunks).toString());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${address && typeof address !== "string" ? address.port : 0}`, held, cut };
}

describe("abandon", () => {
  it("a waiting message leaves its lane unposted; the lane goes on", async () => {
    const gateway = handAnsweredGateway();
    const wired = wiredLoop({ post: gateway.post });
    stopAfter(wired.loop);
    for (const id of [1, 2, 3]) wired.loop.push(inLane(gatewayFrame(id), "c1"));
    await waitUntil("the head posted", () => gateway.posted.length === 1);
    wired.loop.abandon(2, "dropped");
    expect(wired.loop.status.lanes).toMatchObject([{ lane: "c1", posting: 1, waiting: 1 }]);
    gateway.answer(1, 200);
    await waitUntil("the next posted", () => gateway.posted.length === 2);
    gateway.answer(3, 200);
    await waitUntil("acked", () => wired.acked.length === 2);
    expect(gateway.posted).toEqual([1, 3]);
    expect(wired.acked).toEqual([1, 3]);
    expect(wired.rejected).toEqual([]);
  });

  it("a started gateway post: its lane moves on at once; its answer, when it comes, is neither acked nor rejected", async () => {
    const gateway = handAnsweredGateway();
    const wired = wiredLoop({ post: gateway.post });
    stopAfter(wired.loop);
    wired.loop.push(inLane(gatewayFrame(1), "c1"));
    wired.loop.push(inLane(gatewayFrame(2), "c1"));
    await waitUntil("the head posted", () => gateway.posted.length === 1);
    wired.loop.abandon(1, "dropped");
    await waitUntil("the next posted while the first is unanswered", () => gateway.posted.length === 2);
    expect(gateway.waiting.has(1)).toBe(true);
    gateway.answer(2, 200);
    await waitUntil("the next acked", () => wired.acked.length === 1);
    gateway.answer(1, 400);
    wired.loop.push(inLane(gatewayFrame(3), "c1"));
    await waitUntil("a later one posted", () => gateway.posted.length === 3);
    gateway.answer(3, 200);
    await waitUntil("it acked", () => wired.acked.length === 2);
    expect(wired.acked).toEqual([2, 3]);
    expect(wired.rejected).toEqual([]);
    expect(wired.loop.status.rejected).toBe(0);
  });

  it("a started post to an app is given up (the app sees its connection closed unanswered); no ack, no reject; its lane moves on", async () => {
    const app = await holdingApp();
    const wired = wiredLoop();
    stopAfter(wired.loop);
    wired.loop.push(forwardFrame(1, { target: app.url, lane: "source:shop" }));
    wired.loop.push(forwardFrame(2, { target: app.url, lane: "source:shop" }));
    await waitUntil("the head at the app", () => app.held.length === 1);
    wired.loop.abandon(1, "dropped");
    await waitUntil("the head's post given up and the next at the app", () => app.cut.includes('{"n":1}') && app.held.length === 2);
    app.held[1]!.res.writeHead(200).end("ok");
    await waitUntil("the next acked", () => wired.acked.length === 1);
    expect(wired.acked).toEqual([2]);
    expect(wired.rejected).toEqual([]);
    expect(wired.events.filter((e) => e.id === 1 && e.outcome !== "retrying")).toEqual([]);
  });

  it("a message waiting to retry makes no further attempt; sent again for a new target (retargeted) it is taken afresh and delivered there", async () => {
    const old = await app();
    old.script({ status: 503 }, { status: 503 });
    const fresh = await app();
    const wired = wiredLoop({ timings: { forwardRetryDelay: (n) => (n <= 1 ? 0 : 3_600_000) } });
    stopAfter(wired.loop);
    wired.loop.push(forwardFrame(1, { target: old.url, lane: "source:shop", ttlMs: 7_200_000 }));
    await waitUntil("waiting to retry", () => wired.loop.status.lanes[0]?.next_try_at != null);
    wired.loop.abandon(1, "retargeted");
    expect(wired.loop.status.lanes).toEqual([]);
    wired.loop.push(forwardFrame(1, { target: fresh.url, lane: "source:shop" }));
    await waitUntil("delivered to the new target", () => wired.acked.includes(1));
    expect(old.requests).toHaveLength(2);
    expect(fresh.requests).toHaveLength(1);
    expect(wired.rejected).toEqual([]);
    // The old run's wait was cut and it ended: another retry cut now finds nothing of it.
    expect(wired.loop.retryNow().woken).toBe(0);
  });

  it("a gateway message whose 401 paused delivery: abandoned, its pause holds the others no longer", async () => {
    let status = 401;
    const wired = wiredLoop({ gateway: () => status });
    stopAfter(wired.loop);
    wired.loop.push(inLane(gatewayFrame(1), "c1"));
    await waitUntil("paused", () => wired.loop.status.paused !== null);
    wired.loop.push(inLane(gatewayFrame(2, "agentgram_inbox/wake"), "c2"));
    status = 200;
    wired.loop.abandon(1, "dropped");
    await waitUntil("the other delivered", () => wired.acked.includes(2));
    expect(wired.acked).toEqual([2]);
    expect(wired.gatewayPosts).toEqual(["agentgram_inbox/agent", "agentgram_inbox/wake"]);
    expect(wired.loop.status.paused).toBeNull();
    // An id the loop does not hold: nothing happens.
    wired.loop.abandon(99, "dropped");
    expect(wired.rejected).toEqual([]);
  });
});
