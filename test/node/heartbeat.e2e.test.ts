// A half-open connection (the network stops carrying bytes, nobody closes anything) is noticed by the
// heartbeat deadline, dropped, and replaced by a new connection that delivers what waited meanwhile.
// The network is a loopback TCP proxy between the agent and the real relay that can freeze its links
// (test/support/node/freezable-proxy.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeliveryFrame } from "../../protocol/index.ts";
import { identityFromPrivateKey } from "../../local-agent/identity.ts";
import { silentLogger } from "../../local-agent/logger.ts";
import { RelayClient } from "../../local-agent/relay/relay-client.ts";
import type { ConnectionState } from "../../local-agent/relay/relay-client.ts";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import type { StandinGateway } from "../../scripts/standin-gateway.ts";
import { startProxy } from "../support/node/freezable-proxy.ts";
import type { FreezableProxy } from "../support/node/freezable-proxy.ts";
import { makeAgentHome, startRelay, waitUntil } from "../support/node/stack.ts";
import type { AgentHome, LocalRelay } from "../support/node/stack.ts";

let relay: LocalRelay;
let gateway: StandinGateway;
let home: AgentHome;
let proxy: FreezableProxy;

beforeAll(async () => {
  relay = await startRelay();
  gateway = await startStandinGateway();
  home = await makeAgentHome(relay, gateway);
  proxy = await startProxy(relay.port);
});
afterAll(async () => {
  await proxy.close();
  await gateway.close();
  await home.cleanup();
  await relay.stop();
});

describe("heartbeat", () => {
  it("drops a half-open socket within the deadline and resumes on a new one", async () => {
    const frames: DeliveryFrame[] = [];
    const states: ConnectionState[] = [];
    const client = new RelayClient({
      relayUrl: `http://127.0.0.1:${proxy.port}`,
      identity: await identityFromPrivateKey(home.settings.key.private_key, home.settings.key.key_id),
      logger: silentLogger,
      timing: { pingEveryMs: 100, silenceMs: 600 },
    });
    client.on("message", (frame) => {
      frames.push(frame);
      client.ack(frame.id);
    });
    client.onState((state) => states.push(state));
    client.start();
    try {
      await waitUntil("the first connection", () => client.state === "connected");
      proxy.freeze();
      // While the link is frozen a message arrives at the relay; it must come through the next socket.
      const res = await fetch(`${relay.url}/inbox/${home.settings.agent_id}/hooks/agentgram_inbox/agent`, {
        method: "POST",
        headers: { authorization: `Bearer ${home.settings.webhook_token}` },
        body: '{"while":"frozen"}',
      });
      expect(res.status).toBe(202);
      // Dropped by the heartbeat's 600 ms deadline: a frozen link sends no close, so nothing else would drop it.
      await waitUntil("the half-open socket to be dropped", () => states.includes("disconnected"));
      await waitUntil("a new connection and the waiting message", () => frames.some((f) => f.body === '{"while":"frozen"}'));
      expect(states.filter((s) => s === "connected").length).toBe(2);
    } finally {
      await client.close();
    }
  });
});
