// End to end on the real relay: hook bodies and signed envelopes reach the gateway byte-exact or as
// the hub would format them, in order, once each, with a stable Idempotency-Key per message.
import { describe, expect, it } from "vitest";
import { draftEnvelope, hubSessionKey, signEnvelope } from "../../protocol/index.ts";
import type { AgentHandle } from "../../local-agent/agent.ts";
import { idempotencyKeyFor } from "../../local-agent/delivery/delivery.ts";
import { identityFromPrivateKey } from "../../local-agent/identity.ts";
import { postEnvelope } from "../../local-agent/relay/relay-api.ts";
import type { StandinGateway } from "../../scripts/standin-gateway.ts";
import { relayFixture, waitUntil } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";

const fixture = relayFixture();
let gateway: StandinGateway;
let home: AgentHome;
let agent: AgentHandle;

async function setUp(): Promise<void> {
  ({ gateway, home } = await fixture.setUp("Bob"));
}

function hook(subpath: string, body: string | Uint8Array, contentType = "application/json"): Promise<Response> {
  return fetch(`${fixture.relay().url}/inbox/${home.settings.agent_id}/hooks/${subpath}`, {
    method: "POST",
    headers: { authorization: `Bearer ${home.settings.webhook_token}`, "content-type": contentType },
    body,
  });
}

describe("relay → local agent → gateway", () => {
  it("delivers hook bodies byte-exact, in order, once each, with the relay id as Idempotency-Key", async () => {
    await setUp();
    const bodies = ['{"message":"one"}', '{"message":"two"}', '{ "text" : "wake \u00e9" }'];
    const binary = new Uint8Array([0xef, 0xbb, 0xbf, 0xff, 0x00, 0x41]);
    const ids: number[] = [];
    for (const [i, body] of bodies.entries()) {
      const res = await hook(i === 2 ? "agentgram_inbox/wake" : "agentgram_inbox/agent", body);
      ids.push(((await res.json()) as { id: number }).id);
    }
    ids.push(((await (await hook("agentgram_inbox/agent", binary, "application/octet-stream")).json()) as { id: number }).id);
    agent = await fixture.run(home);
    await waitUntil("4 deliveries", () => gateway.received.length === 4);
    // Order holds within a conversation (here: a sub-path, as these bodies carry no sessionKey); the
    // wake sub-path is another conversation and may overtake.
    const onAgent = gateway.received.filter((r) => r.subpath === "agentgram_inbox/agent");
    expect(onAgent.map((r) => r.body.toString("utf8")).slice(0, 2)).toEqual(bodies.slice(0, 2));
    expect([...onAgent[2]!.body]).toEqual([...binary]);
    expect(onAgent[2]!.contentType).toBe("application/octet-stream");
    expect(gateway.received.filter((r) => r.subpath === "agentgram_inbox/wake").map((r) => r.body.toString("utf8"))).toEqual([bodies[2]]);
    const keyOf = (id: number) => idempotencyKeyFor(home.settings.agent_id, id);
    expect(onAgent.map((r) => r.idempotencyKey)).toEqual([ids[0]!, ids[1]!, ids[3]!].map(keyOf));
    expect(gateway.received.find((r) => r.subpath === "agentgram_inbox/wake")!.idempotencyKey).toBe(keyOf(ids[2]!));
    // Acknowledged on the relay: the queue is empty once delivery is done.
    await waitUntil("acks to reach the relay", () => agent!.status().delivery.delivered === 4);
    expect(agent.status().delivery.last_delivery?.status).toBe(200);
  });

  it("turns a signed envelope into the hub's OpenClaw body, and live messages follow the backlog", async () => {
    await setUp();
    const alice = await identityFromPrivateKey(home.settings.key.private_key, home.settings.key.key_id);
    agent = await fixture.run(home);
    await waitUntil("connected", () => agent!.status().relay.state === "connected");
    const envelope = await signEnvelope(
      await draftEnvelope({ from: home.settings.agent_id, to: home.settings.agent_id, type: "message", payload: { text: "Hi Bob!" } }),
      alice.keyId,
      alice.sign,
    );
    // An unsigned display name is dropped by the relay (a2a/0.1 does not sign it): the gateway sees the id.
    const answer = await postEnvelope(fixture.relay().url, { ...envelope, display_name: "Alice" });
    expect(answer.status).toBe(202);
    await waitUntil("the envelope's delivery", () => gateway.received.some((r) => r.body.toString().includes("Hi Bob!")));
    const posted = gateway.received.find((r) => r.body.toString().includes("Hi Bob!"))!;
    expect(posted.subpath).toBe("agentgram_inbox/agent");
    expect(JSON.parse(posted.body.toString())).toEqual({
      message: `${home.settings.agent_id} says: Hi Bob!`,
      name: home.settings.agent_id,
      channel: "last",
      // The hub's key for the DM room of sender and receiver (here the same agent).
      sessionKey: hubSessionKey(`rm_dm_${home.settings.agent_id}_${home.settings.agent_id}`, null),
    });
  });

  it("delivers many messages in order exactly once", async () => {
    await setUp();
    agent = await fixture.run(home);
    await waitUntil("connected", () => agent!.status().relay.state === "connected");
    const count = 60;
    await Promise.all(Array.from({ length: count }, async (_, i) => {
      await new Promise((r) => setTimeout(r, i * 3));
      expect((await hook("agentgram_inbox/agent", JSON.stringify({ n: i }))).status).toBe(202);
    }));
    await waitUntil(`${count} deliveries`, () => gateway.received.length === count);
    const keys = gateway.received.map((r) => Number(r.idempotencyKey!.split(":").pop()));
    expect(keys).toEqual([...keys].sort((a, b) => a - b));
    expect(new Set(gateway.received.map((r) => r.body.toString())).size).toBe(count);
  });
});
