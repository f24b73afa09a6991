// Live requests across versions, the real agent and the real relay with a proxy between them
// (test/support/node/feature-proxy.ts). An agent that does not name "live" (its auth without it) gets
// today's behaviour from a relay that speaks live: a live source's POST is held (agent_too_old) and
// delivered to it as any event, a GET refused at once (503 agent_too_old). A relay that does not name
// live back in `ready` (as one from before) sends the agent no live request it would answer: the agent
// hands none on, and the source's POST is delivered as any event, once.
import { describe, expect, it } from "vitest";
import { HELD_HEADER } from "../../protocol/index.ts";
import { inboxAccess } from "../../local-agent/relay/messages.ts";
import { addSource } from "../../local-agent/relay/sources.ts";
import { featurelessProxy, throughProxy } from "../support/node/feature-proxy.ts";
import { queueItems, relayFixture, waitUntil } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";
import { startStandinApp } from "./forward-app.ts";

const fixture = relayFixture();

/** The real agent for `home`, connected through a proxy that takes `strip` out of its frames (closed after the test). */
async function agentThroughProxy(home: AgentHome, strip: Parameters<typeof featurelessProxy>[1]) {
  const proxy = await featurelessProxy(fixture.relay().url, strip);
  fixture.cleanups.push(() => proxy.close());
  const agent = await fixture.run(throughProxy(home, proxy.url));
  await waitUntil("connected", () => agent.status().relay.state === "connected");
  return { proxy, agent };
}

async function liveSource(home: AgentHome, liveSec: number) {
  const shop = await startStandinApp();
  fixture.cleanups.push(() => shop.close());
  const source = await addSource(await inboxAccess(home.settings), { name: "shop", kind: "token", target: { forward: shop.url, allowPublic: false }, liveSec });
  return { shop, source };
}

describe("live requests between versions", () => {
  it("an agent that does not name live: a POST is held for it (agent_too_old) and delivered once, a GET refused at once", async () => {
    const { home } = await fixture.setUp("Older agent");
    const { shop, source } = await liveSource(home, 10);
    const { proxy, agent } = await agentThroughProxy(home, { fromAuth: ["live"] });
    expect(proxy.auths[0]).toMatchObject({ features: ["lanes", "live"] });
    expect(agent.status().live?.relay).toBe(false);

    const held = await fetch(`${source.post_url}/event`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":1}' });
    expect(held.status).toBe(200);
    expect(held.headers.get(HELD_HEADER)).toBe("agent_too_old");
    const refused = await fetch(`${source.post_url}/page`);
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("agent_too_old");
    await waitUntil("delivered as any event", async () => shop.requests.length === 1 && (await queueItems(fixture.relay().url, home)).length === 0);
    expect(shop.requests.map((r) => [r.method, r.url])).toEqual([["POST", "/event"]]);
    expect(proxy.fromRelay.some((f) => f.type === "request")).toBe(false);
  });

  it("a relay that does not name live in ready: the agent answers no request frame and gets the POST as any event, once", async () => {
    const { home } = await fixture.setUp("Older relay");
    const { shop, source } = await liveSource(home, 1);
    const { agent } = await agentThroughProxy(home, { fromReady: ["live"] });
    expect(agent.status().live?.relay).toBe(false);

    const answer = await fetch(`${source.post_url}/event`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":2}' });
    // The relay waited for an answer the agent would not give (it did not hear live named back).
    expect(answer.headers.get(HELD_HEADER)).toBe("deadline");
    await waitUntil("delivered as any event", async () => shop.requests.length === 1 && (await queueItems(fixture.relay().url, home)).length === 0);
    expect(shop.requests.map((r) => [r.method, r.url, r.body.toString()])).toEqual([["POST", "/event", '{"n":2}']]);
    expect(agent.status().live).toMatchObject({ answered: 0, failed: 0 });
  });
});
