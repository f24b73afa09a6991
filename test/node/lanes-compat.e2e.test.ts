// The relay and installed agents upgrade separately. Between this agent and this relay sits a proxy that
// takes `features` out of the agent's auth frame: the relay then sees an agent from before lanes (and keeps
// its one-range order for it), and the agent gets a `ready` without features, as from a relay before lanes
// (and keeps its cursor by the lowest open id). Both older paths run here against each other's newer code:
// every message arrives once, in order per lane, nothing is left at the relay, and no frame carries a lane.
// The same pairing with lanes on is lanes.e2e.test.ts; raw older-agent frames against the relay are in
// test/worker/.
import { describe, expect, it } from "vitest";
import { inboxAccess } from "../../local-agent/relay/messages.ts";
import { addSource } from "../../local-agent/relay/sources.ts";
import { postHook, queueItems, relayFixture, waitUntil, waitWhileProgressing } from "../support/node/stack.ts";
import { startStandinApp } from "./forward-app.ts";
import { featurelessProxy, throughProxy } from "../support/node/feature-proxy.ts";

const fixture = relayFixture();

describe("an agent and a relay that do not both speak lanes", () => {
  it("keep the order of before: everything arrives once, in order, the cursor passes the last id, no frame carries a lane", async () => {
    const { gateway, home } = await fixture.setUp("Mixed versions");
    const proxy = await featurelessProxy(fixture.relay().url);
    fixture.cleanups.push(() => proxy.close());
    const shop = await startStandinApp();
    fixture.cleanups.push(() => shop.close());
    const source = await addSource(await inboxAccess(home.settings), { name: "shop", kind: "token", target: { forward: `${shop.url}/hooks`, allowPublic: false } });
    for (let n = 1; n <= 6; n++) {
      expect((await fetch(`${source.post_url}?n=${n}`, { method: "POST", headers: { "content-type": "application/json" }, body: `{"n":${n}}` })).status).toBe(200);
      expect((await postHook(fixture.relay().url, home, "agentgram_inbox/agent", `{"n":${n}}`)).status).toBe(202);
    }
    const agent = await fixture.run(throughProxy(home, proxy.url));
    await waitWhileProgressing("six at the shop and six at the gateway", () => shop.requests.length === 6 && gateway.received.length === 6, () => [shop.requests.length, gateway.received.length]);
    await waitUntil("the relay holding nothing", async () => (await queueItems(fixture.relay().url, home, "all")).length === 0);
    expect(shop.requests.map((r) => r.body.toString())).toEqual([1, 2, 3, 4, 5, 6].map((n) => `{"n":${n}}`));
    expect(gateway.received.map((r) => r.body.toString())).toEqual([1, 2, 3, 4, 5, 6].map((n) => `{"n":${n}}`));
    // The agent asked for lanes; the relay never saw the ask, and answered as a relay from before.
    expect(proxy.auths[0]).toMatchObject({ type: "auth", features: ["lanes", "live"] });
    const ready = proxy.fromRelay.find((f) => f.type === "ready")!;
    expect(ready.features ?? []).not.toContain("lanes");
    const messages = proxy.fromRelay.filter((f) => f.type === "message");
    expect(messages).toHaveLength(12);
    for (const frame of messages) expect(frame).not.toHaveProperty("lane");
    // In id order, as the one-range relay sends.
    expect(messages.map((f) => f.id)).toEqual([...messages.map((f) => f.id as number)].sort((a, b) => a - b));
    await waitUntil("the agent's cursor past the last id", () => agent.status().delivery.cursor === (messages.at(-1)!.id as number));
    await agent.close();
  });
});
