// Hybrid search where an embeddings binding exists: the pure mixing rules, and the Directory object
// with a stand-in for Workers AI (a deterministic concept embedder) finding an agent by meaning.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DIRECTORY_NAME } from "../../../worker/directory/routes.ts";
import type { AgentCard } from "../../../worker/directory/card.ts";
import { COSINE_FLOOR, LEXICAL_WEIGHT, calibrated, combineHybrid, cosine } from "../../../worker/directory/semantic-index.ts";
import type { Embedder } from "../../../worker/directory/semantic-index.ts";
import { claimInbox, relayFetch, signedFetch } from "../../support/workerd/agents.ts";

// Stand-in embeddings: one dimension per concept, so "umbrella" lands near "weather forecast".
const CONCEPTS = [
  ["weather", "forecast", "rain", "umbrella", "sunny", "storm", "temperature"],
  ["translate", "translation", "language", "french", "spanish"],
  ["recipe", "cook", "dinner", "meal", "vegetarian"],
];
const conceptEmbedder: Embedder = async (texts) =>
  texts.map((text) => {
    const words = text.toLowerCase().split(/[^a-z]+/);
    return Float32Array.from([...CONCEPTS.map((concept) => words.filter((w) => concept.includes(w)).length), 0.05]);
  });

const card = (name: string, agentId: string, skill: string, description: string): AgentCard => ({
  name,
  agent_id: agentId,
  description,
  skills: [{ id: skill, name: skill, description, tags: [], examples: [] }],
});

describe("hybrid mixing", () => {
  it("calibrates cosine from the floor and keeps scores in 0..1", () => {
    expect(cosine(Float32Array.from([1, 0]), Float32Array.from([1, 0]))).toBeCloseTo(1);
    expect(calibrated(COSINE_FLOOR)).toBe(0);
    expect(calibrated(1)).toBe(1);
    expect(calibrated(0.1)).toBe(0);
  });

  it("merges lexical and semantic hits, weighting words first, with the semantic skill as fallback", () => {
    const a = card("a-bot", "ag_aaaaaaaaaaaa", "one", "x");
    const b = card("b-bot", "ag_bbbbbbbbbbbb", "two", "y");
    const cards = new Map([[a.name, a], [b.name, b]]);
    const { hits, total } = combineHybrid({ hits: [{ card: a, score: 0.5, best_skill_id: "one" }], total: 1 }, new Map([["a-bot", { score: 1, skill: 0 }], ["b-bot", { score: 0.9, skill: 0 }]]), (n) => cards.get(n), 1);
    // Both matched, one fits the limit: total counts before the limit.
    expect(total).toBe(2);
    expect(hits).toHaveLength(1);
    const all = combineHybrid({ hits: [{ card: a, score: 0.5, best_skill_id: "one" }], total: 1 }, new Map([["a-bot", { score: 1, skill: 0 }], ["b-bot", { score: 0.9, skill: 0 }]]), (n) => cards.get(n), 10).hits;
    expect(all).toHaveLength(2);
    hits.push(all[1]!);
    expect(hits.map((h) => h.card.name)).toEqual(["a-bot", "b-bot"]);
    expect(hits[0]!.score).toBeCloseTo(LEXICAL_WEIGHT * 0.5 + (1 - LEXICAL_WEIGHT) * 1);
    expect(hits[1]).toMatchObject({ best_skill_id: "two" });
    expect(hits[1]!.score).toBeCloseTo((1 - LEXICAL_WEIGHT) * 0.9);
    for (const hit of hits) expect(hit.score).toBeLessThanOrEqual(1);
  });
});

describe("directory with an embeddings binding", () => {
  it("finds an agent by meaning when no word matches, and ranks a word match above it", async () => {
    const stub = env.DIRECTORY.getByName(DIRECTORY_NAME);
    await runInDurableObject(stub, (directory) => directory.useEmbedder(conceptEmbedder));
    const publish = async (name: string, skill: string, description: string) => {
      const { agent } = await claimInbox();
      const res = await signedFetch(agent, "PUT", `/directory/agents/${name}`, card(name, agent.id, skill, description));
      expect(res.status).toBe(201);
    };
    await publish("skycast", "forecast", "Weather forecast and rain outlook");
    await publish("polyglot", "translate", "Translation between French and Spanish");
    await publish("chefbot", "recipes", "Vegetarian dinner recipe ideas");
    const search = async (query: string) =>
      ((await (await relayFetch("/directory/search", { method: "POST", body: JSON.stringify({ query }) })).json()) as { agents: { name: string; score: number; best_skill_id: string }[] }).agents;

    const byMeaning = await search("umbrella needed tomorrow?");
    expect(byMeaning[0]).toMatchObject({ name: "skycast", best_skill_id: "forecast" });
    expect(byMeaning.map((a) => a.name)).not.toContain("chefbot");

    const byWords = await search("vegetarian recipe");
    expect(byWords[0]!.name).toBe("chefbot");
    expect(byWords[0]!.score).toBeGreaterThan(0.6);

    // Without the binding the same meaning-only query finds nothing: lexical alone.
    await runInDurableObject(stub, (directory) => directory.useEmbedder(null));
    expect(await search("umbrella needed tomorrow?")).toEqual([]);
  });
});
