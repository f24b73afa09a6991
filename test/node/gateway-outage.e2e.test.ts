// Delivery after a gateway outage (local-agent/delivery/delivery.ts, post-slots.ts, retry-wait.ts), on the
// real relay and agent with a stand-in gateway: while the gateway is unreachable or failing one probe
// finds when it answers again, every waiting conversation then resumes at once, and the outage costs a
// bounded number of connection attempts. Regression tests for the fault soak of issue 22: after a 20 s
// outage one conversation waited 27.8 s (a backoff shared by every conversation, sleepers never woken)
// and the outage drew 78 connection attempts.
import { describe, expect, it } from "vitest";
import { outageAttemptBound } from "../../local-agent/delivery/retry-wait.ts";
import type { ReceivedHook, StandinGateway } from "../../scripts/standin-gateway.ts";
import { postHook, relayFixture, waitUntil } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";

const fixture = relayFixture();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Far above the ≤ 0.5 s the probe takes (a loaded machine), far below the seconds the old backoff waited. */
const RESUMED_WITHIN_MS = 3000;

const sender = (i: number) => `ag_${String(i).padStart(12, "0")}`;
function hubBody(from: string, n: number): string {
  return JSON.stringify({ message: `${from} says: #${n}`, name: from, channel: "last", sessionKey: `agentline:${from}` });
}
const parsed = (hook: ReceivedHook) => JSON.parse(hook.body.toString()) as { name: string; message: string };

async function post(home: AgentHome, conversations: number, from: number, to: number): Promise<void> {
  for (let n = from; n <= to; n++) {
    await Promise.all(Array.from({ length: conversations }, async (_, i) => expect((await postHook(fixture.relay().url, home, "agentgram_inbox/agent", hubBody(sender(i), n))).status).toBe(202)));
  }
}

/** Every conversation's messages arrived in order, each once (its Idempotency-Key accepted once). */
function expectInOrderOnce(gateway: StandinGateway, conversations: number, perConversation: number): void {
  expect(gateway.received).toHaveLength(conversations * perConversation);
  expect(new Set(gateway.received.map((r) => r.idempotencyKey)).size).toBe(gateway.received.length);
  for (let i = 0; i < conversations; i++) {
    const numbers = gateway.received.filter((r) => parsed(r).name === sender(i)).map((r) => Number(/#(\d+)$/.exec(parsed(r).message)![1]));
    expect(numbers).toEqual(Array.from({ length: perConversation }, (_, k) => k + 1));
  }
}

/** How long after `since` each conversation's first message arrived (ms), slowest last. */
function resumedAfter(gateway: StandinGateway, conversations: number, since: number): number[] {
  return Array.from({ length: conversations }, (_, i) => gateway.received.find((r) => r.at >= since && parsed(r).name === sender(i))!.at - since).sort((a, b) => a - b);
}

describe("delivery after a gateway outage", () => {
  it("regression: after an 8 s outage all 13 conversations resume within seconds of the gateway's return, and the outage costs a bounded number of connection attempts", async () => {
    const conversations = 13;
    const { gateway, home } = await fixture.setUp("Outage");
    const agent = await fixture.run(home);
    await waitUntil("connected", () => agent.status().relay.state === "connected");
    await post(home, conversations, 1, 2);
    await waitUntil("the first 26 delivered", () => gateway.received.length === conversations * 2);
    await gateway.goDown();
    const downAt = Date.now();
    await post(home, conversations, 3, 5);
    await waitUntil("the agent to see the gateway down", () => agent.status().delivery.gateway_down !== null);
    await sleep(8000 - (Date.now() - downAt));
    const attempts = gateway.connectionsWhileDown;
    const downMs = Date.now() - downAt;
    await gateway.comeBack();
    const backAt = Date.now();
    await waitUntil("all 65 messages at the gateway", () => gateway.received.length === conversations * 5, 30_000);
    const resumed = resumedAfter(gateway, conversations, backAt);
    // The bound for 8 s at concurrency 4 is 26; the per-conversation timers made 65.
    expect(attempts).toBeLessThanOrEqual(outageAttemptBound(downMs, 4));
    expect(outageAttemptBound(8000, 4)).toBeLessThanOrEqual(26);
    expect(resumed.at(-1)).toBeLessThanOrEqual(RESUMED_WITHIN_MS);
    expectInOrderOnce(gateway, conversations, 5);
    await waitUntil("all acknowledged", () => agent.status().delivery.delivered === conversations * 5);
    expect(agent.status().delivery.gateway_down).toBeNull();
  });

  it("a gateway answering 503 to every post is probed by one post at a time; its first 200 releases every conversation", async () => {
    const conversations = 8;
    const { gateway, home } = await fixture.setUp("Failing");
    let failing = true;
    gateway.refuse = () => (failing ? 503 : null);
    const agent = await fixture.run(home);
    await waitUntil("connected", () => agent.status().relay.state === "connected");
    const start = Date.now();
    await post(home, conversations, 1, 2);
    await waitUntil("the agent to see the gateway failing", () => agent.status().delivery.gateway_down !== null);
    await sleep(4000 - (Date.now() - start));
    const refused = gateway.requests.length;
    const failedFor = Date.now() - start;
    failing = false;
    const backAt = Date.now();
    await waitUntil("all 16 messages at the gateway", () => gateway.received.length === conversations * 2, 20_000);
    expect(refused).toBeLessThanOrEqual(outageAttemptBound(failedFor, 4));
    expect(resumedAfter(gateway, conversations, backAt).at(-1)).toBeLessThanOrEqual(RESUMED_WITHIN_MS);
    expectInOrderOnce(gateway, conversations, 2);
    expect(agent.status().delivery.gateway_down).toBeNull();
  });

  it("a message the gateway answers 500 every time holds up only its own conversation, also when it is the only traffic", async () => {
    const { gateway, home } = await fixture.setUp("Poison");
    gateway.refuse = (hook) => (parsed(hook).message.includes("poison") ? 500 : null);
    const agent = await fixture.run(home);
    await waitUntil("connected", () => agent.status().relay.state === "connected");
    await postHook(fixture.relay().url, home, "agentgram_inbox/agent", JSON.stringify({ message: "poison", sessionKey: "agentline:ag_aaaaaaaaaaaa" }));
    // Alone, it fails often enough in a row to look like an outage: it is probed, not retried by a timer of its own.
    await waitUntil("the poison message seen as an outage", () => agent.status().delivery.gateway_down !== null);
    await sleep(1500);
    const before = gateway.requests.length;
    await post(home, 3, 1, 2);
    // The probe takes turns among the waiting messages: the first other message through ends the outage.
    await waitUntil("the other conversations' six messages", () => gateway.received.length === 6, 5000);
    expect(gateway.requests.length - before).toBeLessThan(20);
    expectInOrderOnce(gateway, 3, 2);
    // Counted once the gateway's answer is handled, a moment after it arrived there.
    await waitUntil("six counted as delivered", () => agent.status().delivery.delivered === 6, 5000);
  });
});
