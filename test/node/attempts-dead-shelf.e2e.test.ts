// Attempts on the dead shelf equal the posts made (issue 24: `messages` showed ATTEMPTS 0 for a message
// tried three times). End to end through the real relay: retries after 503s and a 401 pause (cut short by
// retryNow) are counted by the agent; a replayed message refused again adds its posts to those carried over
// (worker/storage/inbox-store.ts markDead), so the shelf counts every post of the message, across replays.
import { describe, expect, it } from "vitest";
import type { AgentHandle } from "../../local-agent/agent.ts";
import { ownerCall, postHook, queueItems, relayFixture, waitUntil } from "../support/node/stack.ts";

const stack = relayFixture();
const AGENT = "agentgram_inbox/agent";

const retryNow = (agent: AgentHandle) => fetch(`http://127.0.0.1:${agent.apiPort}/clawrelay/retry`, { method: "POST" });

describe("attempts on the dead shelf", () => {
  it("equal the gateway posts of the message, through a 401 pause, 503s, and a replay refused again", async () => {
    const { gateway, home } = await stack.setUp("Counter");
    const agent = await stack.run(home);
    await waitUntil("connected", () => agent.status().relay.state === "connected");
    const relay = stack.relay().url;
    gateway.script({ status: 401 }, { status: 503 }, { status: 503 }, { status: 400 });
    const id = Number((await postHook(relay, home, AGENT, JSON.stringify({ message: "counted" }))).body.id);
    await waitUntil("paused on 401", () => agent.status().delivery.paused !== null);
    await retryNow(agent);
    await waitUntil("on the dead shelf", async () => (await queueItems(relay, home, "dead")).length === 1);
    const posts = () => gateway.requests.filter((r) => r.subpath === AGENT).length;
    expect(posts()).toBe(4);
    const [dead] = await queueItems(relay, home, "dead");
    expect(dead).toMatchObject({ id, attempts: 4, last_status: 400 });

    gateway.script({ status: 400 });
    const again = Number((await ownerCall(relay, home, "POST", `/queue/${id}/replay`)).body.id);
    await waitUntil("the replay on the dead shelf", async () => (await queueItems(relay, home, "dead")).some((m) => m.id === again));
    expect(posts()).toBe(5);
    expect((await queueItems(relay, home, "dead")).find((m) => m.id === again)).toMatchObject({ attempts: 5, replay_of: id });
  });
});
