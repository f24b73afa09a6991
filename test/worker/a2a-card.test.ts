// The Agent Card through the relay: fetched live from the gateway (always as GET: the gateway answers its
// card to nothing else), its endpoint URLs rewritten to <relay>/inbox/<id>/a2a/v1, stored, and served from
// the store while the agent is offline (x-clawrelay-card: stored; 503 when none was ever stored); the pure
// rewrite of every URL field.
import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { A2aView } from "../../protocol/index.ts";
import { claimInbox, relayFetch, signedFetch } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { answer, liveAgent, nextRequest, refusedWith } from "../support/workerd/live.ts";
import { closeAllSockets } from "../support/workerd/socket-client.ts";
import { rewriteCard } from "../../worker/a2a/a2a-card.ts";

afterEach(closeAllSockets);

/** The card OpenClaw 2026.9.6 answers when advertisedUrl is unset (its loopback origin). */
const GATEWAY_CARD = {
  name: "OpenClaw",
  supportedInterfaces: [{ url: "http://127.0.0.1:18789/a2a/v1", protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
  version: "2026.9.6",
  skills: [{ id: "main", name: "main", description: "see http://example.com/docs", tags: ["openclaw"] }],
};

async function enabled(): Promise<ClaimedInbox> {
  const inbox = await claimInbox();
  const res = await signedFetch(inbox.agent, "PUT", `/inbox/${inbox.agent.id}/a2a`, { peers: [{ name: "p", token_sha256: createHash("sha256").update("t").digest("hex") }], deadline_sec: 60 });
  expect(res.status).toBe(200);
  return inbox;
}

const cardPath = (inbox: ClaimedInbox, file = "agent-card.json") => `/inbox/${inbox.agent.id}/.well-known/${file}`;

describe("the Agent Card", () => {
  it("is fetched live as GET, served with its endpoint rewritten to the inbox's, and stored; offline the stored one is served", async () => {
    const inbox = await enabled();
    const agent = await liveAgent(inbox);
    const pending = relayFetch(cardPath(inbox));
    const request = await nextRequest(agent);
    expect(request).toMatchObject({ to: "a2a", method: "GET", tail: "/.well-known/agent-card.json", deadline_ms: 10_000 });
    answer(agent, request.rid, 200, [["content-type", "application/json; charset=utf-8"]], JSON.stringify(GATEWAY_CARD));
    const res = await pending;
    expect(res.status).toBe(200);
    const served = (await res.json()) as typeof GATEWAY_CARD;
    const endpoint = `https://relay.test/inbox/${inbox.agent.id}/a2a/v1`;
    expect(served.supportedInterfaces[0]!.url).toBe(endpoint);
    expect(served.skills).toEqual(GATEWAY_CARD.skills);
    expect(res.headers.get("x-clawrelay-card")).toBeNull();
    const view = (await (await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/a2a`)).json()) as A2aView;
    expect(view.card_stored_at).not.toBeNull();
    agent.close();
    await agent.closeEvent().catch(() => undefined);
    for (const file of ["agent-card.json", "agent.json"]) {
      const offline = await relayFetch(cardPath(inbox, file));
      expect(offline.status).toBe(200);
      expect(offline.headers.get("x-clawrelay-card")).toBe("stored");
      expect(((await offline.json()) as typeof GATEWAY_CARD).supportedInterfaces[0]!.url).toBe(endpoint);
    }
  });

  it("a HEAD goes down as GET (the gateway answers its card to GET only) and comes back without a body", async () => {
    const inbox = await enabled();
    const agent = await liveAgent(inbox);
    const pending = relayFetch(cardPath(inbox, "agent.json"), { method: "HEAD" });
    const request = await nextRequest(agent);
    expect(request).toMatchObject({ method: "GET", tail: "/.well-known/agent.json" });
    answer(agent, request.rid, 200, [], JSON.stringify(GATEWAY_CARD));
    const res = await pending;
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
  });

  it("offline with no card ever stored is 503 agent_offline with Retry-After; a card given with PUT is served offline", async () => {
    const inbox = await enabled();
    expect(await refusedWith(await relayFetch(cardPath(inbox)), 503, "agent_offline")).toBe("30");
    const put = await signedFetch(inbox.agent, "PUT", `/inbox/${inbox.agent.id}/a2a`, { peers: [], deadline_sec: 60, card: GATEWAY_CARD });
    expect(put.status).toBe(200);
    const res = await relayFetch(cardPath(inbox));
    expect(res.headers.get("x-clawrelay-card")).toBe("stored");
    expect(((await res.json()) as typeof GATEWAY_CARD).name).toBe("OpenClaw");
  });

  it("is 404 a2a_not_enabled on an inbox that does not publish A2A", async () => {
    const inbox = await claimInbox();
    expect(await refusedWith(await relayFetch(cardPath(inbox)), 404, "a2a_not_enabled")).toBeNull();
  });
});

describe("rewriteCard", () => {
  it("points url, supportedInterfaces[].url, additionalInterfaces[].url and any /a2a/v1 URL at the endpoint; other strings stay", () => {
    const endpoint = "https://relay.example/inbox/ag_0123456789ab/a2a/v1";
    const card = {
      url: "http://localhost:18789/",
      supportedInterfaces: [{ url: "http://127.0.0.1:18789/a2a/v1", protocolBinding: "JSONRPC" }],
      additionalInterfaces: [{ url: "http://127.0.0.1:18789/grpc", transport: "GRPC" }],
      provider: { docs: "https://example.com/a2a/v1/", home: "https://example.com/" },
      description: "talks /a2a/v1",
    };
    expect(rewriteCard(card, endpoint)).toEqual({
      url: endpoint,
      supportedInterfaces: [{ url: endpoint, protocolBinding: "JSONRPC" }],
      additionalInterfaces: [{ url: endpoint, transport: "GRPC" }],
      provider: { docs: endpoint, home: "https://example.com/" },
      description: "talks /a2a/v1",
    });
  });
});
