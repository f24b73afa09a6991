// The directory's HTTP: signed publish/release, name ownership, replay ordering, reads and search.
import { describe, expect, it } from "vitest";
import { signedRequestHeaders, utf8 } from "../../../protocol/index.ts";
import { claimInbox, errorCode, newAgent, relayFetch, signedFetch } from "../../support/workerd/agents.ts";
import type { TestAgent } from "../../support/workerd/agents.ts";

const unique = () => `bot-${crypto.randomUUID().slice(0, 8)}`;

function card(agent: TestAgent, extra: Record<string, unknown> = {}) {
  return {
    agent_id: agent.id,
    description: "Real-time weather forecasts for any city",
    skills: [{ id: "forecast", name: "Weather Forecast", description: "Current conditions and a 7-day forecast", tags: ["weather"], examples: ["Weather in Paris?"] }],
    ...extra,
  };
}

const publish = (agent: TestAgent, name: string, body: unknown, signer?: TestAgent) =>
  signedFetch(agent, "PUT", `/directory/agents/${name}`, body, signer);

async function search(query: string, limit?: number) {
  const res = await relayFetch("/directory/search", { method: "POST", body: JSON.stringify({ query, ...(limit === undefined ? {} : { limit }) }) });
  return { status: res.status, body: (await res.json()) as { agents: { name: string; score: number; best_skill_id: string; agent_id: string; skills: unknown[] }[]; total: number } };
}

describe("directory", () => {
  it("publishes a card signed by the agent's key, finds it by search, reads it back", async () => {
    const { agent } = await claimInbox();
    const name = unique();
    const res = await publish(agent, name, card(agent, { skills: [{ id: "tides", name: "Tide tables zyxquo", description: "High and low tides", tags: [], examples: [] }] }));
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ name, agent_id: agent.id, created: true });
    const found = await search("zyxquo tides");
    expect(found.body.agents[0]).toMatchObject({ name, agent_id: agent.id, best_skill_id: "tides" });
    expect(found.body.agents[0]!.score).toBeGreaterThan(0.5);
    expect(found.body.agents[0]!.score).toBeLessThanOrEqual(1);
    expect(found.body.agents[0]!.skills).toEqual([{ id: "tides", name: "Tide tables zyxquo", description: "High and low tides" }]);
    const read = await relayFetch(`/directory/agents/${name}`);
    expect(((await read.json()) as { agent_id: string }).agent_id).toBe(agent.id);
  });

  it("keeps a name with its first agent until released", async () => {
    const first = (await claimInbox()).agent;
    const second = (await claimInbox()).agent;
    const name = unique();
    expect((await publish(first, name, card(first))).status).toBe(201);
    const taken = await publish(second, name, card(second));
    expect(taken.status).toBe(409);
    expect(await errorCode(taken)).toBe("name_taken");
    const released = await signedFetch(first, "DELETE", `/directory/agents/${name}`);
    expect(released.status).toBe(200);
    expect((await relayFetch(`/directory/agents/${name}`)).status).toBe(404);
    expect((await publish(second, name, card(second))).status).toBe(201);
  });

  it("refuses a key that may not act for the card's agent, and agents without an inbox", async () => {
    const { agent } = await claimInbox();
    const intruder = newAgent();
    const res = await publish(agent, unique(), card(agent), intruder);
    expect(res.status).toBe(403);
    expect(await errorCode(res)).toBe("key_not_authorised");
    const homeless = newAgent();
    const noInbox = await publish(homeless, unique(), card(homeless));
    expect(noInbox.status).toBe(409);
    expect(await errorCode(noInbox)).toBe("inbox_not_claimed");
    const other = (await claimInbox()).agent;
    const notOwner = await signedFetch(agent, "DELETE", `/directory/agents/${unique()}`, undefined, other);
    expect(notOwner.status).toBe(404);
  });

  it("updates in signing order: a replayed older publish cannot undo a newer one", async () => {
    const { agent } = await claimInbox();
    const name = unique();
    const path = `/directory/agents/${name}`;
    const old = utf8(JSON.stringify(card(agent, { description: "old words" })));
    const oldHeaders = await signedRequestHeaders(agent.publicKey, "PUT", path, old, agent.sign, Math.floor(Date.now() / 1000) - 60);
    expect((await publish(agent, name, card(agent, { description: "new words" }))).status).toBe(201);
    const replay = await relayFetch(path, { method: "PUT", headers: oldHeaders, body: old });
    expect(replay.status).toBe(409);
    expect(await errorCode(replay)).toBe("stale_card");
    expect(((await (await relayFetch(path)).json()) as { description: string }).description).toBe("new words");
  });

  it("an agent holds one name: publishing another releases the first", async () => {
    const { agent } = await claimInbox();
    const [a, b] = [unique(), unique()];
    await publish(agent, a, card(agent));
    expect((await publish(agent, b, card(agent))).status).toBe(201);
    expect((await relayFetch(`/directory/agents/${a}`)).status).toBe(404);
  });

  it("explains invalid cards and queries", async () => {
    const { agent } = await claimInbox();
    const res = await publish(agent, unique(), card(agent, { skills: [{ id: "has space", name: "x" }] }));
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("invalid_card");
    expect(body.error.message).toContain("skills[0].id");
    expect(await errorCode(await publish(agent, "Upper_Case", card(agent)))).toBe("invalid_card");
    const bad = await relayFetch("/directory/search", { method: "POST", body: JSON.stringify({ limit: 3 }) });
    expect(bad.status).toBe(400);
    expect(await errorCode(bad)).toBe("invalid_query");
  });

  it("clamps the limit to 1..50", async () => {
    const { agent } = await claimInbox();
    const word = `w${crypto.randomUUID().slice(0, 6)}`;
    await publish(agent, unique(), card(agent, { description: word }));
    expect((await search(word, 0)).body.total).toBe(1);
    expect((await search(word, 500)).status).toBe(200);
  });
});
