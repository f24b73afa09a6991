// Delivery in parallel across conversations, in order within each (local-agent/delivery/delivery.ts,
// conversation.ts), on the real relay with a stand-in gateway that fails on purpose: a retrying message
// holds up only its own conversation, order per conversation survives injected 503s, and every message
// arrives exactly once.
import { describe, expect, it } from "vitest";
import { conversationOf } from "../../local-agent/delivery/conversation.ts";
import { relayFixture, postHook, waitUntil } from "../support/node/stack.ts";
import type { DeliveryFrame } from "../../protocol/index.ts";

const fixture = relayFixture();

/** A body as the hub posts it, from `sender`, numbered within its conversation. */
function hubBody(sender: string, n: number): string {
  return JSON.stringify({ message: `${sender} says: #${n}`, name: sender, channel: "last", sessionKey: `agentline:${sender}` });
}

function parsed(body: Buffer): { sender: string; n: number } {
  const { name, message } = JSON.parse(body.toString()) as { name: string; message: string };
  return { sender: name, n: Number(/#(\d+)$/.exec(message)![1]) };
}

describe("conversations", () => {
  it("the conversation key: the hub's sessionKey, an envelope's sender as the hub would key it, else the sub-path", () => {
    const frame = (body: string, subpath: string, contentType = "application/json"): DeliveryFrame =>
      ({ type: "message", kind: "hook", id: 1, subpath, content_type: contentType, encoding: "utf8", body, received_at: 0, expires_at: 0 }) as DeliveryFrame;
    expect(conversationOf(frame(hubBody("ag_aaaaaaaaaaaa", 1), "agentgram_inbox/agent"), null)).toBe("session:agentline:ag_aaaaaaaaaaaa");
    expect(conversationOf(frame('{"message":"x"}', "github/push"), null)).toBe("subpath:github/push");
    expect(conversationOf(frame("not json", "a/b", "text/plain"), null)).toBe("subpath:a/b");
    expect(conversationOf(frame('{"sessionKey": 7}', "a/b"), null)).toBe("subpath:a/b");
    const envelope = { from: "ag_aaaaaaaaaaaa" } as Parameters<typeof conversationOf>[1];
    expect(conversationOf(frame("{}", ""), envelope)).toBe("session:agentline:ag_aaaaaaaaaaaa");
  });

  it("a message retrying for seconds holds up only its own conversation", async () => {
    const { gateway, home } = await fixture.setUp("Busy");
    const fromB = () => gateway.received.filter((r) => parsed(r.body).sender === "ag_bbbbbbbbbbbb").length;
    // A's first message is refused (503) until all five of B's arrived: one message at a time across
    // conversations could never get there, since B's messages come after A's.
    gateway.refuse = (hook) => (parsed(hook.body).sender === "ag_aaaaaaaaaaaa" && fromB() < 5 ? 503 : null);
    const relay = fixture.relay().url;
    expect((await postHook(relay, home, "agentgram_inbox/agent", hubBody("ag_aaaaaaaaaaaa", 1))).status).toBe(202);
    expect((await postHook(relay, home, "agentgram_inbox/agent", hubBody("ag_aaaaaaaaaaaa", 2))).status).toBe(202);
    for (let n = 1; n <= 5; n++) expect((await postHook(relay, home, "agentgram_inbox/agent", hubBody("ag_bbbbbbbbbbbb", n))).status).toBe(202);
    const agent = await fixture.run(home);
    await waitUntil("B's five to arrive", () => fromB() === 5);
    expect(gateway.requests.some((r) => r.status === 503)).toBe(true);
    expect(agent.status().delivery).toMatchObject({ concurrency: 4 });
    await waitUntil("A's two to arrive", () => gateway.received.length === 7, 20_000);
    expect(gateway.received.filter((r) => parsed(r.body).sender === "ag_aaaaaaaaaaaa").map((r) => parsed(r.body).n)).toEqual([1, 2]);
    expect(gateway.received.filter((r) => parsed(r.body).sender === "ag_bbbbbbbbbbbb").map((r) => parsed(r.body).n)).toEqual([1, 2, 3, 4, 5]);
  });

  it("under 15 % injected 503s, 12 conversations: each in order, each message exactly once", async () => {
    const { gateway, home } = await fixture.setUp("Crowd");
    // Deterministic failures: every message's first two attempts fail with probability ~15 % each.
    const attempts = new Map<string, number>();
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    gateway.refuse = (hook) => {
      const key = hook.idempotencyKey ?? "";
      const tries = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, tries);
      return tries <= 2 && random() < 0.15 ? 503 : null;
    };
    const senders = Array.from({ length: 12 }, (_, i) => `ag_${String(i).padStart(12, "0")}`);
    const perSender = 10;
    const agent = await fixture.run(home);
    await waitUntil("connected", () => agent.status().relay.state === "connected");
    const relay = fixture.relay().url;
    for (let n = 1; n <= perSender; n++) {
      await Promise.all(senders.map(async (sender) => expect((await postHook(relay, home, "agentgram_inbox/agent", hubBody(sender, n))).status).toBe(202)));
    }
    await waitUntil("all delivered", () => gateway.received.length >= senders.length * perSender, 60_000);
    await waitUntil("all acknowledged", () => agent.status().delivery.delivered === senders.length * perSender, 10_000);
    expect(gateway.received).toHaveLength(senders.length * perSender);
    expect(gateway.requests.filter((r) => r.status === 503).length).toBeGreaterThan(5);
    for (const sender of senders) {
      expect(gateway.received.filter((r) => parsed(r.body).sender === sender).map((r) => parsed(r.body).n)).toEqual(Array.from({ length: perSender }, (_, i) => i + 1));
    }
  });
});
