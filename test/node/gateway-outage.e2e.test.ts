// Delivery after a gateway outage (local-agent/delivery/delivery.ts, post-slots.ts, retry-wait.ts), on the
// real relay and agent with a stand-in gateway: while the gateway is unreachable or failing one probe
// finds when it answers again, every waiting conversation then resumes at once, and the outage costs a
// bounded number of connection attempts. Regression tests for the fault soak of issue 22: after a 20 s
// outage one conversation waited 27.8 s (a backoff shared by every conversation, sleepers never woken)
// and the outage drew 78 connection attempts. An outage here lasts until the agent has probed the
// gateway a given number of times (the probes' waits have grown to their 500 ms ceiling by the fifth),
// not a fixed time; "at once" is read from the agent's log: while the gateway is down no message waits
// on a timer of its own (the agent logs each such wait with its retry_in_ms), so the probe's first
// success is what releases them all.
import { describe, expect, it } from "vitest";
import { outageAttemptBound } from "../../local-agent/delivery/retry-wait.ts";
import type { AgentHandle } from "../../local-agent/agent.ts";
import type { ReceivedHook, StandinGateway } from "../../scripts/standin-gateway.ts";
import { postHook, recordingLogger, relayFixture, waitUntil } from "../support/node/stack.ts";
import type { AgentHome, LogLine } from "../support/node/stack.ts";

const fixture = relayFixture();
/** Probes of the gateway an outage lasts (the fifth waits the 500 ms ceiling). */
const OUTAGE_PROBES = 6;

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

/** Until the agent has probed the gateway that is down `probes` times. */
function probedTimes(agent: AgentHandle, probes: number): Promise<void> {
  return waitUntil(`${probes} probes of the gateway that is down`, () => (agent.status().delivery.gateway_down?.probes ?? 0) >= probes);
}

/** The retry waits of their own the agent logged from its "gateway down" line to its "gateway back" line. */
function ownWaitsWhileDown(lines: LogLine[]): LogLine[] {
  const down = lines.findIndex((l) => l.event === "gateway down");
  const back = lines.findIndex((l) => l.event === "gateway back");
  expect(down, "the agent saw the gateway down").toBeGreaterThanOrEqual(0);
  expect(back, "the agent saw the gateway back").toBeGreaterThan(down);
  return lines.slice(down, back).filter((l) => l.fields.retry_in_ms !== undefined);
}

describe("delivery after a gateway outage", () => {
  it("regression: after an outage all 13 conversations resume on the probe's first success, none on a timer of its own, and the outage costs a bounded number of connection attempts", async () => {
    const conversations = 13;
    const { gateway, home } = await fixture.setUp("Outage");
    const logger = recordingLogger();
    const agent = await fixture.run(home, logger);
    await waitUntil("connected", () => agent.status().relay.state === "connected");
    await post(home, conversations, 1, 2);
    await waitUntil("the first 26 delivered", () => gateway.received.length === conversations * 2);
    await gateway.goDown();
    const downAt = Date.now();
    await post(home, conversations, 3, 5);
    await probedTimes(agent, OUTAGE_PROBES);
    const attempts = gateway.connectionsWhileDown;
    const downMs = Date.now() - downAt;
    await gateway.comeBack();
    await waitUntil("all 65 messages at the gateway", () => gateway.received.length === conversations * 5);
    // At concurrency 4: the posts in flight and those the first failures freed, then one per probe (the per-conversation timers made 65 in 8 s).
    expect(attempts).toBeLessThanOrEqual(outageAttemptBound(downMs, 4));
    expect(outageAttemptBound(8000, 4)).toBeLessThanOrEqual(26);
    expect(ownWaitsWhileDown(logger.lines)).toEqual([]);
    expectInOrderOnce(gateway, conversations, 5);
    await waitUntil("all acknowledged", () => agent.status().delivery.delivered === conversations * 5);
    expect(agent.status().delivery.gateway_down).toBeNull();
  });

  it("a gateway answering 503 to every post is probed by one post at a time; its first 200 releases every conversation", async () => {
    const conversations = 8;
    const { gateway, home } = await fixture.setUp("Failing");
    let failing = true;
    gateway.refuse = () => (failing ? 503 : null);
    const logger = recordingLogger();
    const agent = await fixture.run(home, logger);
    await waitUntil("connected", () => agent.status().relay.state === "connected");
    const start = Date.now();
    await post(home, conversations, 1, 2);
    await probedTimes(agent, OUTAGE_PROBES);
    const refused = gateway.requests.length;
    const failedFor = Date.now() - start;
    failing = false;
    await waitUntil("all 16 messages at the gateway", () => gateway.received.length === conversations * 2);
    expect(refused).toBeLessThanOrEqual(outageAttemptBound(failedFor, 4));
    expect(ownWaitsWhileDown(logger.lines)).toEqual([]);
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
    await probedTimes(agent, OUTAGE_PROBES);
    const before = gateway.requests.length;
    await post(home, 3, 1, 2);
    // The probe takes turns among the waiting messages: the first other message through ends the outage.
    await waitUntil("the other conversations' six messages", () => gateway.received.length === 6);
    expect(gateway.requests.length - before).toBeLessThan(20);
    expectInOrderOnce(gateway, 3, 2);
    // Counted once the gateway's answer is handled, a moment after it arrived there.
    await waitUntil("six counted as delivered", () => agent.status().delivery.delivered === 6);
  });
});
