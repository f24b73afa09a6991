// Delivery in parallel across conversations, in order within each (local-agent/delivery/delivery.ts,
// conversation.ts), on the real relay with a stand-in gateway that fails on purpose: a retrying message
// holds up only its own conversation, order per conversation survives injected 503s, and every message
// arrives exactly once.
import { describe, expect, it } from "vitest";
import { conversationOf } from "../../local-agent/delivery/conversation.ts";
import { relayFixture, postHook, waitUntil } from "../support/node/stack.ts";
import { hubSessionKey, parseEnvelope, pulledRecordBody, readPulledRecord } from "../../protocol/index.ts";
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
  it("the conversation key: the hub's sessionKey, an envelope's as the hub would key it, a forwarded source, else the sub-path", () => {
    const frame = (body: string, subpath: string, contentType = "application/json"): DeliveryFrame =>
      ({ type: "message", kind: "hook", id: 1, subpath, content_type: contentType, encoding: "utf8", body, received_at: 0, expires_at: 0 }) as DeliveryFrame;
    expect(conversationOf(frame(hubBody("ag_aaaaaaaaaaaa", 1), "agentgram_inbox/agent"), null)).toBe("agentline:ag_aaaaaaaaaaaa");
    expect(conversationOf(frame('{"message":"x"}', "github/push"), null)).toBe("subpath:github/push");
    expect(conversationOf(frame("not json", "a/b", "text/plain"), null)).toBe("subpath:a/b");
    expect(conversationOf(frame('{"sessionKey": 7}', "a/b"), null)).toBe("subpath:a/b");
    const forwarded = { ...frame(hubBody("ag_aaaaaaaaaaaa", 1), "sources/gh"), forward: { source: "gh" } } as DeliveryFrame;
    expect(conversationOf(forwarded, null)).toBe("forward:gh");
    const envelope = { from: "ag_aaaaaaaaaaaa", to: "ag_bbbbbbbbbbbb", type: "message" } as Parameters<typeof conversationOf>[1];
    expect(conversationOf(frame("{}", ""), envelope)).toBe(hubSessionKey("rm_dm_ag_aaaaaaaaaaaa_ag_bbbbbbbbbbbb", null));
  });

  it("regression: a sender's direct envelope and the hub's body for its next message are one conversation (were agentline:<sender> and the room's key)", () => {
    const envelope = { v: "a2a/0.1", msg_id: "m1", ts: 1, from: "ag_aaaaaaaaaaaa", to: "ag_bbbbbbbbbbbb", type: "message", reply_to: null, ttl_sec: 60, payload: { text: "direct" }, payload_hash: "sha256:0", sig: { alg: "ed25519", key_id: "k_1", value: "" } };
    const record = readPulledRecord({ hub_msg_id: "h_1", text: "via the hub", room_id: "rm_dm_ag_aaaaaaaaaaaa_ag_bbbbbbbbbbbb", room_member_count: 2, topic: null, mentioned: true })!;
    const { leaf, body } = pulledRecordBody(record, parseEnvelope({ ...envelope, msg_id: "m2" }), "signature", null);
    const frame = (kind: "hook" | "envelope", subpath: string | null, value: unknown): DeliveryFrame =>
      ({ type: "message", kind, id: 1, subpath, content_type: "application/json", encoding: "utf8", body: JSON.stringify(value), received_at: 0, expires_at: 0 });
    const sentDirect = frame("envelope", null, envelope);
    const pulled = frame("hook", `agentgram_inbox/${leaf}`, body);
    expect(conversationOf(pulled, null)).toBe(conversationOf(sentDirect, parseEnvelope(envelope)));
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
