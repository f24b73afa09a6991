// The gateway misbehaves: down, wrong token, rate limiting, refusing one message, flapping.
// Nothing is acknowledged before the gateway accepted it, and nothing is lost.
import { describe, expect, it } from "vitest";
import type { AgentHandle } from "../../local-agent/agent.ts";
import { identityFromPrivateKey } from "../../local-agent/identity.ts";
import { signedRelayCall } from "../../local-agent/relay/relay-api.ts";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import type { StandinGateway } from "../../scripts/standin-gateway.ts";
import { recordingLogger, relayFixture, waitUntil } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";

const fixture = relayFixture();
let gateway: StandinGateway;
let home: AgentHome;
let agent: AgentHandle;

async function setUp(): Promise<void> {
  ({ gateway, home } = await fixture.setUp("Bob"));
}

async function hook(body: string): Promise<number> {
  const res = await fetch(`${fixture.relay().url}/inbox/${home.settings.agent_id}/hooks/agentgram_inbox/agent`, {
    method: "POST",
    headers: { authorization: `Bearer ${home.settings.webhook_token}` },
    body,
  });
  return ((await res.json()) as { id: number }).id;
}

/** Ids still stored on the relay (unacknowledged), read with the agent's key. */
async function relayQueue(): Promise<number[]> {
  const identity = await identityFromPrivateKey(home.settings.key.private_key, home.settings.key.key_id);
  const answer = await signedRelayCall(fixture.relay().url, identity, "GET", `/inbox/${home.settings.agent_id}/messages?ack=false`);
  return (answer.body.messages as { id: number }[]).map((m) => m.id);
}

describe("gateway failures", () => {
  it("keeps messages on the relay while the gateway is down and delivers them when it returns", async () => {
    await setUp();
    const port = gateway.port;
    await gateway.close();
    agent = await fixture.run(home);
    const ids = [await hook('{"n":1}'), await hook('{"n":2}')];
    await waitUntil("the agent's failed attempt at the gateway", () => agent.status().delivery.last_error !== null);
    expect(agent.status().delivery.delivered).toBe(0);
    expect(await relayQueue()).toEqual(ids);
    gateway = await startStandinGateway({ port, token: gateway.token });
    const revived = gateway;
    fixture.cleanups.push(() => revived.close());
    await waitUntil("both messages after the gateway returned", () => gateway.received.length === 2, 20_000);
    expect(gateway.received.map((r) => r.body.toString())).toEqual(['{"n":1}', '{"n":2}']);
    await waitUntil("relay queue empty", async () => (await relayQueue()).length === 0);
  });

  it("on 401 stops, says why, does not acknowledge and does not hammer the gateway", async () => {
    await setUp();
    gateway.script({ status: 401 }, { status: 401 }, { status: 401 });
    const id = await hook('{"n":1}');
    const logger = recordingLogger();
    agent = await fixture.run(home, logger);
    // The agent's decision, from its log: the next attempt a minute away (the gateway locks a client out
    // after 20 bad tokens a minute), and meanwhile nothing else posted.
    await waitUntil("the agent's refusal line", () => logger.lines.some((l) => l.event === "gateway refused"));
    expect(logger.lines.find((l) => l.event === "gateway refused")!.fields).toMatchObject({ status: 401, retry_in_ms: 60_000 });
    expect(gateway.requests.length).toBe(1);
    const status = agent.status();
    expect(status.delivery.paused).toContain("hooks.token");
    expect(status.delivery.delivered).toBe(0);
    expect(await relayQueue()).toEqual([id]);
  });

  it("on 429 waits for Retry-After, then delivers with the same Idempotency-Key", async () => {
    await setUp();
    gateway.script({ status: 429, retryAfter: "1" });
    await hook('{"n":1}');
    agent = await fixture.run(home);
    await waitUntil("delivery after the 429", () => gateway.received.length === 1);
    const [refused, accepted] = gateway.requests;
    expect(refused!.status).toBe(429);
    expect(accepted!.at - refused!.at).toBeGreaterThanOrEqual(950);
    expect(accepted!.idempotencyKey).toBe(refused!.idempotencyKey);
  });

  it("retries transient failures (503, 500, connection drop) with the same key until accepted", async () => {
    await setUp();
    gateway.script({ status: 503 }, { status: 500 }, { status: 408 });
    await hook('{"n":1}');
    agent = await fixture.run(home);
    await waitUntil("delivery after transient failures", () => gateway.received.length === 1, 20_000);
    expect(gateway.requests.map((r) => r.status)).toEqual([503, 500, 408, 200]);
    expect(new Set(gateway.requests.map((r) => r.idempotencyKey)).size).toBe(1);
  });

  it("rejects a message the gateway refuses for its content (413) to the dead shelf and goes on with later ones", async () => {
    await setUp();
    gateway.script({ status: 413 });
    const refused = await hook('{"big":true}');
    await hook('{"n":2}');
    agent = await fixture.run(home);
    await waitUntil("the later message", () => gateway.received.length === 1);
    expect(gateway.received[0]!.body.toString()).toBe('{"n":2}');
    expect(agent.status().delivery.recent_rejections).toEqual([expect.objectContaining({ id: refused, status: 413, attempts: 1, reason: expect.stringContaining("256 KiB") })]);
    await waitUntil("nothing queued on the relay", async () => (await relayQueue()).length === 0);
    const identity = await identityFromPrivateKey(home.settings.key.private_key, home.settings.key.key_id);
    const shown = await signedRelayCall(fixture.relay().url, identity, "GET", `/inbox/${home.settings.agent_id}/queue/${refused}`);
    expect(shown.body.message).toMatchObject({ id: refused, state: "dead", last_status: 413, reason: expect.stringContaining("413") });
  });
});
